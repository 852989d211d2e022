#include "btree/index_node.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "util/check.h"
#include "util/coding.h"

namespace kvs::btree {

namespace {

namespace format = node_format;
namespace xf = index_format;

uint16_t SlotAt(std::string_view node, const NodeHeader& header, size_t i) {
  return coding::DecodeFixed16(node.data() + header.SlotArrayOffset() +
                               i * format::slot_size_bytes);
}

uint64_t PointerAt(std::string_view node, size_t i) {
  return coding::DecodeFixed64(node.data() + format::pointer_array_offset +
                               i * format::pointer_size_bytes);
}

size_t ChildSizeForLevel(uint8_t level) {
  return level == 1 ? format::leaf_node_size_bytes
                    : format::index_node_size_bytes;
}

}  // namespace

std::string_view ShortestSeparator(std::string_view left,
                                   std::string_view right) {
  KVS_CHECK(left < right);
  const size_t limit = std::min(left.size(), right.size());
  size_t common = 0;
  while (common < limit && left[common] == right[common]) {
    ++common;
  }
  // left < right, so right is longer than the common prefix: either left is
  // a prefix of right, or they differ at `common` with left's byte smaller.
  return right.substr(0, common + 1);
}

size_t IndexNodeBuilder::PivotSizeBytes(std::string_view pivot) {
  return format::pointer_size_bytes + format::slot_size_bytes +
         xf::pivot_size_size_bytes + pivot.size();
}

void IndexNodeBuilder::Reset(uint8_t level) {
  KVS_CHECK(level >= 1 && level < format::tree_height_max);
  level_ = level;
  child_offsets_.clear();
  pivot_offsets_.clear();
  pivots_.clear();
}

uint64_t IndexNodeBuilder::child_offset(size_t index) const {
  KVS_CHECK(index < child_offsets_.size());
  return child_offsets_[index];
}

size_t IndexNodeBuilder::used_size_bytes() const {
  return format::header_size_bytes +
         child_offsets_.size() * format::pointer_size_bytes +
         pivot_offsets_.size() * format::slot_size_bytes + pivots_.size();
}

bool IndexNodeBuilder::Fits(std::string_view pivot) const {
  return used_size_bytes() + PivotSizeBytes(pivot) <=
         format::index_node_size_bytes;
}

void IndexNodeBuilder::AddFirstChild(uint64_t child_offset) {
  KVS_CHECK(child_offsets_.empty());
  KVS_CHECK(IsValidNodePointer(child_offset, ChildSizeForLevel(level_)));
  child_offsets_.push_back(child_offset);
}

void IndexNodeBuilder::AddChild(std::string_view pivot, uint64_t child_offset) {
  KVS_CHECK(!child_offsets_.empty());
  KVS_CHECK(!pivot.empty() && pivot.size() <= limits::key_size_bytes_max);
  KVS_CHECK(Fits(pivot));
  KVS_CHECK(IsValidNodePointer(child_offset, ChildSizeForLevel(level_)));
  if (!pivot_offsets_.empty()) {
    const size_t last = pivot_offsets_.back();
    const std::string_view last_pivot =
        std::string_view(pivots_).substr(last + xf::pivot_size_size_bytes);
    KVS_CHECK_MSG(last_pivot < pivot, "pivots must increase");
  }
  pivot_offsets_.push_back(static_cast<uint16_t>(pivots_.size()));
  char size[xf::pivot_size_size_bytes];
  coding::EncodeFixed16(size, static_cast<uint16_t>(pivot.size()));
  pivots_.append(size, sizeof(size));
  pivots_.append(pivot);
  child_offsets_.push_back(child_offset);
}

std::string_view IndexNodeBuilder::Finish() {
  KVS_CHECK(!child_offsets_.empty());
  node_.assign(format::index_node_size_bytes, '\0');
  NodeHeader header;
  header.type = NodeType::kIndex;
  header.level = level_;
  header.entry_count = static_cast<uint16_t>(pivot_offsets_.size());
  header.pointer_count = static_cast<uint16_t>(child_offsets_.size());
  header.used_size_bytes = static_cast<uint16_t>(used_size_bytes());
  AssembleNode(header, child_offsets_, pivot_offsets_, pivots_, node_.data(),
               node_.size());
  return node_;
}

Status IndexNodeView::Parse(std::string_view node, IndexNodeView* view,
                            bool validated) {
  if (!validated) {
    KVS_RETURN_IF_ERROR(ValidateNode(node));
  }
  const NodeHeader header = DecodeNodeHeader(node.data());
  if (header.type != NodeType::kIndex) {
    return Status::Corruption("expected an index node, found a leaf");
  }
  view->node_ = node;
  view->header_ = header;
  return Status::Ok();
}

std::string_view IndexNodeView::pivot(size_t index) const {
  KVS_CHECK(index < pivot_count());
  const size_t slot = SlotAt(node_, header_, index);
  const size_t size = coding::DecodeFixed16(node_.data() + slot);
  return node_.substr(slot + xf::pivot_size_size_bytes, size);
}

uint64_t IndexNodeView::child_offset(size_t index) const {
  KVS_CHECK(index < child_count());
  return PointerAt(node_, index);
}

size_t IndexNodeView::ChildSizeBytes() const {
  return ChildSizeForLevel(header_.level);
}

size_t IndexNodeView::ChildIndexFor(std::string_view key) const {
  // Binary search for the first pivot > key.
  size_t low = 0;
  size_t high = pivot_count();
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (pivot(middle) <= key) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

namespace internal {

Status ValidateIndexEntries(std::string_view node, const NodeHeader& header) {
  if (size_t{header.pointer_count} != size_t{header.entry_count} + 1) {
    return Status::Corruption("index node's child count is not pivots + 1");
  }
  // Builds the message only on failure: validation runs on every read.
  const auto corrupt = [](const char* problem, size_t index) {
    return Status::Corruption(std::string(problem) + " at index entry " +
                              std::to_string(index));
  };
  const size_t child_size = ChildSizeForLevel(header.level);
  for (size_t i = 0; i < header.pointer_count; ++i) {
    if (!IsValidNodePointer(PointerAt(node, i), child_size)) {
      return corrupt("invalid child pointer", i);
    }
  }
  size_t expected_offset = header.EntriesOffset();
  std::string_view previous_pivot;
  for (size_t i = 0; i < header.entry_count; ++i) {
    if (SlotAt(node, header, i) != expected_offset) {
      return corrupt("slot does not point right after the previous pivot", i);
    }
    if (header.used_size_bytes - expected_offset < xf::pivot_size_size_bytes) {
      return corrupt("pivot past the used size", i);
    }
    const size_t size = coding::DecodeFixed16(node.data() + expected_offset);
    const size_t begin = expected_offset + xf::pivot_size_size_bytes;
    if (size == 0 || size > limits::key_size_bytes_max ||
        header.used_size_bytes - begin < size) {
      return corrupt("pivot empty, too large or past the used size", i);
    }
    const std::string_view pivot = node.substr(begin, size);
    if (i > 0 && !(previous_pivot < pivot)) {
      return corrupt("pivots not in strictly increasing order", i);
    }
    previous_pivot = pivot;
    expected_offset = begin + size;
  }
  if (expected_offset != header.used_size_bytes) {
    return Status::Corruption("index entries do not end at its used size");
  }
  return Status::Ok();
}

}  // namespace internal

}  // namespace kvs::btree
