#include "btree/tree_reader.h"

#include <string>
#include <utility>

#include "btree/index_node.h"
#include "util/check.h"

namespace kvs::btree {

namespace format = node_format;

namespace {

// The keys a node reached through the descent may hold: [lower, upper),
// from the pivots on the way down (absent bounds are unbounded).
struct KeyRange {
  bool has_lower = false;
  bool has_upper = false;
  std::string lower;
  std::string upper;

  // Whether [first, last] lies inside the range.
  bool Contains(std::string_view first, std::string_view last) const {
    return (!has_lower || std::string_view(lower) <= first) &&
           (!has_upper || last < std::string_view(upper));
  }
};

Status ReadNode(NodeSource* source, uint64_t offset, size_t size,
                std::string* node) {
  KVS_RETURN_IF_ERROR(source->Read(offset, size, node));
  if (node->size() != size) {
    return Status::IoError("node source returned a short read");
  }
  return Status::Ok();
}

Status ReadShared(NodeSource* source, uint64_t offset, size_t size,
                  NodeSource::SharedNode* node) {
  KVS_RETURN_IF_ERROR(source->ReadShared(offset, size, node));
  if (node->bytes == nullptr || node->bytes->size() != size) {
    return Status::IoError("node source returned a short read");
  }
  return Status::Ok();
}

// Reads a leaf into `buffer` (which the caller's views point into).
Status ReadLeaf(NodeSource* source, uint64_t offset, std::string* buffer,
                bool* validated) {
  NodeSource::SharedNode shared;
  KVS_RETURN_IF_ERROR(
      ReadShared(source, offset, format::leaf_node_size_bytes, &shared));
  buffer->assign(*shared.bytes);
  *validated = shared.validated;
  return Status::Ok();
}

}  // namespace

TreeReader::TreeReader(NodeSource* source, uint64_t root_offset)
    : source_(source), root_offset_(root_offset) {
  KVS_CHECK(source_ != nullptr);
}

Status TreeReader::FindLeaf(std::string_view key, std::string* leaf_buffer,
                            LeafNodeView* leaf) const {
  KVS_CHECK(root_offset_ != 0);
  uint64_t offset = root_offset_;
  size_t size = root_size_bytes_.load(std::memory_order_relaxed);
  bool leaf_already_read = false;
  bool leaf_validated = false;
  if (size == 0) {
    // Every node is at least a leaf long and never crosses its segment, so
    // reading a leaf's worth at the root is always in bounds.
    KVS_RETURN_IF_ERROR(
        ReadNode(source_, offset, format::leaf_node_size_bytes, leaf_buffer));
    const auto type =
        static_cast<NodeType>((*leaf_buffer)[format::node_type_offset]);
    size = NodeSizeBytes(type == NodeType::kIndex ? NodeType::kIndex
                                                  : NodeType::kLeaf);
    leaf_already_read = size == format::leaf_node_size_bytes;
  }
  NodeSource::SharedNode index_node;
  KeyRange range;
  int expected_level = -1;  // unknown at the root
  // Each step goes one level down; levels are < tree_height_max.
  for (unsigned step = 0; step < format::tree_height_max; ++step) {
    const bool is_root = step == 0;
    if (size == format::leaf_node_size_bytes) {
      if (!leaf_already_read) {
        KVS_RETURN_IF_ERROR(
            ReadLeaf(source_, offset, leaf_buffer, &leaf_validated));
      }
      KVS_RETURN_IF_ERROR(
          LeafNodeView::Parse(*leaf_buffer, leaf, leaf_validated));
      if (!range.Contains(leaf->key(0), leaf->key(leaf->entry_count() - 1))) {
        return Status::Corruption("leaf keys lie outside its parent's range");
      }
      if (is_root) {
        root_size_bytes_.store(size, std::memory_order_relaxed);
      }
      return Status::Ok();
    }
    KVS_RETURN_IF_ERROR(ReadShared(source_, offset, size, &index_node));
    IndexNodeView node;
    KVS_RETURN_IF_ERROR(
        IndexNodeView::Parse(*index_node.bytes, &node, index_node.validated));
    if (expected_level >= 0 && node.level() != expected_level) {
      return Status::Corruption("index node at the wrong level");
    }
    if (node.pivot_count() > 0 &&
        !range.Contains(node.pivot(0), node.pivot(node.pivot_count() - 1))) {
      return Status::Corruption("index pivots lie outside its parent's range");
    }
    if (is_root) {
      root_size_bytes_.store(size, std::memory_order_relaxed);
    }
    const size_t child = node.ChildIndexFor(key);
    if (child > 0) {
      range.has_lower = true;
      range.lower.assign(node.pivot(child - 1));
    }
    if (child < node.pivot_count()) {
      range.has_upper = true;
      range.upper.assign(node.pivot(child));
    }
    offset = node.child_offset(child);
    size = node.ChildSizeBytes();
    expected_level = node.level() - 1;
  }
  return Status::Corruption("tree deeper than the format allows");
}

Status TreeReader::Get(std::string_view key, std::string* leaf_buffer,
                       LeafValue* value, bool* found) const {
  *found = false;
  *value = LeafValue();
  if (root_offset_ == 0) {
    return Status::Ok();
  }
  LeafNodeView leaf;
  KVS_RETURN_IF_ERROR(FindLeaf(key, leaf_buffer, &leaf));
  const size_t index = leaf.LowerBound(key);
  if (index < leaf.entry_count() && leaf.key(index) == key) {
    *found = true;
    *value = leaf.value(index);
  }
  return Status::Ok();
}

TreeReader::Iterator::Iterator(const TreeReader* reader)
    : reader_(reader),
      leaf_buffer_(std::make_unique<std::string>()),
      next_leaf_buffer_(std::make_unique<std::string>()) {
  KVS_CHECK(reader_ != nullptr);
}

void TreeReader::Iterator::Fail(Status status) {
  status_ = std::move(status);
  valid_ = false;
}

void TreeReader::Iterator::SeekToFirst() {
  Seek(std::string_view());  // the empty key is the smallest key
}

void TreeReader::Iterator::Seek(std::string_view target) {
  status_ = Status::Ok();
  valid_ = false;
  if (reader_->root_offset_ == 0) {
    return;
  }
  Status status = reader_->FindLeaf(target, leaf_buffer_.get(), &leaf_);
  if (!status.ok()) {
    Fail(std::move(status));
    return;
  }
  index_ = leaf_.LowerBound(target);
  valid_ = true;
  if (index_ == leaf_.entry_count()) {
    // Every key of this leaf is < target; the next leaf's first key is
    // >= the pivot that bounds this leaf, which is > target.
    MoveToNextLeaf();
  }
}

void TreeReader::Iterator::Next() {
  KVS_CHECK(valid_);
  ++index_;
  if (index_ == leaf_.entry_count()) {
    MoveToNextLeaf();
  }
}

void TreeReader::Iterator::MoveToNextLeaf() {
  const uint64_t next_offset = leaf_.next_leaf_offset();
  if (next_offset == 0) {
    valid_ = false;
    return;
  }
  bool validated = false;
  Status status = ReadLeaf(reader_->source_, next_offset,
                           next_leaf_buffer_.get(), &validated);
  LeafNodeView next;
  if (status.ok()) {
    status = LeafNodeView::Parse(*next_leaf_buffer_, &next, validated);
  }
  // A forward-only chain cannot loop, so a scan always ends.
  if (status.ok() && !(leaf_.key(leaf_.entry_count() - 1) < next.key(0))) {
    status = Status::Corruption("next-leaf chain does not go forward");
  }
  if (!status.ok()) {
    Fail(std::move(status));
    return;
  }
  std::swap(leaf_buffer_, next_leaf_buffer_);
  leaf_ = next;
  index_ = 0;
  valid_ = true;
}

std::string_view TreeReader::Iterator::key() const {
  KVS_CHECK(valid_);
  return leaf_.key(index_);
}

LeafValue TreeReader::Iterator::value() const {
  KVS_CHECK(valid_);
  return leaf_.value(index_);
}

}  // namespace kvs::btree
