#include "btree/tree_builder.h"

#include <utility>

#include "util/check.h"

namespace kvs::btree {

namespace format = node_format;

TreeBuilder::TreeBuilder(NodeSink* sink) : sink_(sink) {
  KVS_CHECK(sink_ != nullptr);
}

Status TreeBuilder::Allocate(size_t size, uint64_t* device_offset) {
  Status status = sink_->Allocate(size, device_offset);
  if (!status.ok()) {
    sticky_error_ = status;
    return status;
  }
  KVS_CHECK_MSG(IsValidNodePointer(*device_offset, size),
                "sink allocated a zero, unaligned or segment-crossing offset");
  return Status::Ok();
}

Status TreeBuilder::WriteNode(uint64_t device_offset, std::string_view node) {
  // Check data right before it is written: a builder bug must not reach the
  // device (or a backup).
  KVS_CHECK_MSG(ValidateNode(node).ok(), "builder produced an invalid node");
  Status status = sink_->Write(device_offset, node);
  if (!status.ok()) {
    sticky_error_ = status;
    return status;
  }
  stats_.node_bytes += node.size();
  return Status::Ok();
}

Status TreeBuilder::Add(std::string_view key, const LeafValue& value) {
  KVS_CHECK_MSG(!finished_, "Add after Finish");
  KVS_RETURN_IF_ERROR(sticky_error_);
  KVS_RETURN_IF_ERROR(CheckLeafEntry(key, value));
  KVS_CHECK_MSG(!has_last_key_ || last_key_ < key,
                "keys must be added in strictly increasing order");
  if (leaf_.empty()) {
    // The very first entry: nothing precedes this leaf.
    KVS_RETURN_IF_ERROR(Allocate(format::leaf_node_size_bytes, &leaf_offset_));
    leaf_has_left_separator_ = false;
  } else if (!leaf_.Fits(key, value)) {
    uint64_t next_leaf_offset;
    KVS_RETURN_IF_ERROR(
        Allocate(format::leaf_node_size_bytes, &next_leaf_offset));
    KVS_RETURN_IF_ERROR(FinishLeaf(next_leaf_offset));
    leaf_offset_ = next_leaf_offset;
    leaf_has_left_separator_ = true;
    leaf_left_separator_.assign(ShortestSeparator(last_key_, key));
  }
  leaf_.Add(key, value);
  last_key_.assign(key);
  has_last_key_ = true;
  ++stats_.entry_count;
  stats_.key_bytes += key.size();
  stats_.inline_value_bytes += value.inline_bytes.size();
  stats_.tombstone_count += value.kind == EntryKind::kDelete ? 1 : 0;
  stats_.log_pointer_count += value.kind == EntryKind::kPutInLog ? 1 : 0;
  return Status::Ok();
}

Status TreeBuilder::FinishLeaf(uint64_t next_leaf_offset) {
  KVS_RETURN_IF_ERROR(WriteNode(leaf_offset_, leaf_.Finish(next_leaf_offset)));
  ++stats_.leaf_count;
  leaf_.Reset();
  return AddChild(0, leaf_has_left_separator_, leaf_left_separator_,
                  leaf_offset_);
}

Status TreeBuilder::FinishIndexNode(size_t level_index, uint64_t* node_offset) {
  KVS_RETURN_IF_ERROR(Allocate(format::index_node_size_bytes, node_offset));
  KVS_RETURN_IF_ERROR(
      WriteNode(*node_offset, index_levels_[level_index].node.Finish()));
  ++stats_.index_node_count;
  ++index_levels_[level_index].finished_node_count;
  return Status::Ok();
}

Status TreeBuilder::AddChild(size_t level_index, bool has_separator,
                             std::string_view separator,
                             uint64_t child_offset) {
  if (level_index == index_levels_.size()) {
    // The first child ever at this level: it has no left neighbour.
    KVS_CHECK(!has_separator);
    KVS_CHECK_MSG(level_index + 1 < format::tree_height_max,
                  "tree taller than the format allows");
    index_levels_.emplace_back();
    index_levels_.back().node.Reset(static_cast<uint8_t>(level_index + 1));
    index_levels_.back().node.AddFirstChild(child_offset);
    return Status::Ok();
  }
  KVS_CHECK(has_separator);
  if (index_levels_[level_index].node.Fits(separator)) {
    index_levels_[level_index].node.AddChild(separator, child_offset);
    return Status::Ok();
  }
  // The open node is full: finish it, route to it from the level above with
  // its own left separator, and open the next node with this child. The
  // recursion may grow index_levels_, so no reference into it is held.
  uint64_t node_offset;
  KVS_RETURN_IF_ERROR(FinishIndexNode(level_index, &node_offset));
  const bool node_has_separator = index_levels_[level_index].has_left_separator;
  const std::string node_separator =
      std::move(index_levels_[level_index].left_separator);
  KVS_RETURN_IF_ERROR(AddChild(level_index + 1, node_has_separator,
                               node_separator, node_offset));
  IndexLevel& level = index_levels_[level_index];
  level.node.Reset(static_cast<uint8_t>(level_index + 1));
  level.node.AddFirstChild(child_offset);
  level.has_left_separator = true;
  level.left_separator.assign(separator);
  return Status::Ok();
}

Status TreeBuilder::Finish(uint64_t* root_offset) {
  KVS_CHECK_MSG(!finished_, "Finish called twice");
  KVS_RETURN_IF_ERROR(sticky_error_);
  finished_ = true;
  *root_offset = 0;
  if (leaf_.empty()) {
    return Status::Ok();  // an empty tree: nothing was allocated
  }
  KVS_RETURN_IF_ERROR(FinishLeaf(0));
  // Close the levels bottom-up. A level that never finished a node holds
  // every node of the level below in its open node: that node is the root,
  // unless it has a single child, which then is the root itself.
  for (size_t level_index = 0;; ++level_index) {
    KVS_CHECK(level_index < index_levels_.size());
    IndexLevel& level = index_levels_[level_index];
    if (level.finished_node_count == 0 && level.node.child_count() == 1) {
      stats_.height = static_cast<uint32_t>(level_index + 1);
      *root_offset = level.node.child_offset(0);
      return Status::Ok();
    }
    const bool is_top = level.finished_node_count == 0;
    const bool has_separator = level.has_left_separator;
    const std::string separator = level.left_separator;
    uint64_t node_offset;
    KVS_RETURN_IF_ERROR(FinishIndexNode(level_index, &node_offset));
    if (is_top) {
      stats_.height = static_cast<uint32_t>(level_index + 2);
      *root_offset = node_offset;
      return Status::Ok();
    }
    KVS_RETURN_IF_ERROR(
        AddChild(level_index + 1, has_separator, separator, node_offset));
  }
}

}  // namespace kvs::btree
