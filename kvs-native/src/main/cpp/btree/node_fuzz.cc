// libFuzzer target for the B+-tree node validator and parsers, which read
// node bytes from the device and from the network (Send-Index). Every input
// is tried as given and, when it has a node's size, once more with the right
// checksum, so that the fuzzer reaches the structural checks behind the
// checksum and the parsers of nodes it made up. Any crash, sanitizer report
// or out-of-bounds read is a bug; so is a parsed node that breaks a promise
// of ValidateNode (checked with __builtin_trap).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "alloc/device_offset.h"
#include "btree/index_node.h"
#include "btree/leaf_node.h"
#include "btree/node_format.h"
#include "btree/pointer_rewrite.h"

namespace {

using kvs::Status;
namespace btree = kvs::btree;

void Require(bool condition) {
  if (!condition) {
    __builtin_trap();
  }
}

void ParseLeaf(std::string_view bytes) {
  btree::LeafNodeView leaf;
  if (!btree::LeafNodeView::Parse(bytes, &leaf).ok()) {
    return;
  }
  Require(leaf.entry_count() > 0);
  for (size_t i = 0; i < leaf.entry_count(); ++i) {
    const std::string_view key = leaf.key(i);
    const btree::LeafValue value = leaf.value(i);
    Require(btree::CheckLeafEntry(key, value).ok());
    Require(leaf.LowerBound(key) == i);
    Require(i == 0 || leaf.key(i - 1) < key);
  }
  (void)leaf.LowerBound(bytes.substr(40, 8));
}

void ParseIndex(std::string_view bytes) {
  btree::IndexNodeView index;
  if (!btree::IndexNodeView::Parse(bytes, &index).ok()) {
    return;
  }
  Require(index.child_count() == index.pivot_count() + 1);
  for (size_t i = 0; i < index.pivot_count(); ++i) {
    Require(index.ChildIndexFor(index.pivot(i)) == i + 1);
  }
  for (size_t i = 0; i < index.child_count(); ++i) {
    Require(btree::IsValidNodePointer(index.child_offset(i),
                                      index.ChildSizeBytes()));
  }
  (void)index.ChildIndexFor(bytes.substr(40, 8));
}

void Exercise(std::string_view bytes) {
  ParseLeaf(bytes);
  ParseIndex(bytes);
  // A rewrite either fails and leaves the bytes alone, or yields a node that
  // validates.
  std::string copy(bytes);
  const Status status = btree::RewriteNodePointers(
      copy.data(), copy.size(), [](uint64_t old_offset, uint64_t* new_offset) {
        *new_offset =
            kvs::alloc::DeviceOffset(kvs::alloc::SegmentOf(old_offset) + 3,
                                     kvs::alloc::OffsetInSegment(old_offset));
        return Status::Ok();
      });
  if (status.ok()) {
    Require(btree::ValidateNode(copy).ok());
  } else {
    Require(copy == bytes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Exercise(bytes);
  if (size == btree::node_format::leaf_node_size_bytes ||
      size == btree::node_format::index_node_size_bytes) {
    std::string resealed(bytes);
    btree::SealNode(resealed.data(), resealed.size());
    Exercise(resealed);
  }
  return 0;
}
