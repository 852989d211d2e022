#include "btree/tree_reader.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "btree/index_node.h"
#include "util/check.h"

namespace kvs::btree {

namespace format = node_format;

namespace {

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

// The size of the node at `offset`, whose parent does not give it (a
// tree's root): every node is at least a leaf long and never crosses its
// segment, so reading a leaf's worth is always in bounds.
Status ProbeNodeSize(NodeSource* source, uint64_t offset, size_t* size) {
  std::string buffer;
  KVS_RETURN_IF_ERROR(
      ReadNode(source, offset, format::leaf_node_size_bytes, &buffer));
  *size = static_cast<NodeType>(buffer[format::node_type_offset]) ==
                  NodeType::kIndex
              ? NodeSizeBytes(NodeType::kIndex)
              : NodeSizeBytes(NodeType::kLeaf);
  return Status::Ok();
}

// Reads the leaf at `offset` into `buffer` and parses it into *leaf.
Status ReadLeafView(NodeSource* source, uint64_t offset, std::string* buffer,
                    LeafNodeView* leaf) {
  bool validated = false;
  KVS_RETURN_IF_ERROR(ReadLeaf(source, offset, buffer, &validated));
  return LeafNodeView::Parse(*buffer, leaf, validated);
}

}  // namespace

TreeReader::TreeReader(NodeSource* source, uint64_t root_offset)
    : source_(source), root_offset_(root_offset) {
  KVS_CHECK(source_ != nullptr);
}

Status TreeReader::FindLeaf(std::string_view key, std::string* leaf_buffer,
                            LeafNodeView* leaf, Subtree* left) const {
  KVS_CHECK(root_offset_ != 0);
  Subtree root;
  root.offset = root_offset_;
  root.size = root_size_bytes_.load(std::memory_order_relaxed);
  return Descend(root, &key, leaf_buffer, leaf, left);
}

Status TreeReader::EstimateFraction(std::string_view lower,
                                    const std::string* upper,
                                    double* fraction) const {
  *fraction = 0;
  if (root_offset_ == 0) {
    return Status::Ok();
  }
  double weight = 0;
  const Edges edges{lower.empty(), upper == nullptr, true};
  return MeasureSubtree(root_offset_, 0, lower, upper, 0, edges, fraction,
                        &weight);
}

Status TreeReader::KeyAtFraction(std::string_view lower,
                                 const std::string* upper, double fraction,
                                 std::string* key, bool* found) const {
  *found = false;
  if (root_offset_ == 0) return Status::Ok();
  double total = 0;
  KVS_RETURN_IF_ERROR(EstimateFraction(lower, upper, &total));
  if (total <= 0) return Status::Ok();
  const double target = fraction * total;
  const auto inside = [&](std::string_view candidate) {
    return candidate > lower &&
           (upper == nullptr || candidate < std::string_view(*upper));
  };
  // The last of `count` ascending candidates (by `at`) with at most
  // `target` of the range's entries below it; -1 if none.
  const auto last_at_most = [&](size_t count, const auto& at,
                                ptrdiff_t* index) -> Status {
    ptrdiff_t low = 0;
    ptrdiff_t high = static_cast<ptrdiff_t>(count) - 1;
    *index = -1;
    while (low <= high) {
      const ptrdiff_t middle = low + (high - low) / 2;
      const std::string candidate(at(static_cast<size_t>(middle)));
      double below = 0;
      KVS_RETURN_IF_ERROR(EstimateFraction(lower, &candidate, &below));
      if (below <= target) {
        *index = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return Status::Ok();
  };
  uint64_t offset = root_offset_;
  size_t size = 0;
  for (unsigned depth = 0; depth < format::tree_height_max; ++depth) {
    if (size == 0) KVS_RETURN_IF_ERROR(ProbeNodeSize(source_, offset, &size));
    if (size == format::leaf_node_size_bytes) {
      std::string buffer;
      LeafNodeView leaf;
      KVS_RETURN_IF_ERROR(ReadLeafView(source_, offset, &buffer, &leaf));
      std::vector<size_t> candidates;
      for (size_t i = 0; i < leaf.entry_count(); ++i) {
        if (inside(leaf.key(i))) candidates.push_back(i);
      }
      if (candidates.empty()) return Status::Ok();
      ptrdiff_t chosen = -1;
      KVS_RETURN_IF_ERROR(last_at_most(
          candidates.size(), [&](size_t i) { return leaf.key(candidates[i]); },
          &chosen));
      key->assign(leaf.key(candidates[std::max<ptrdiff_t>(chosen, 0)]));
      *found = true;
      return Status::Ok();
    }
    NodeSource::SharedNode shared;
    KVS_RETURN_IF_ERROR(ReadShared(source_, offset, size, &shared));
    IndexNodeView node;
    KVS_RETURN_IF_ERROR(
        IndexNodeView::Parse(*shared.bytes, &node, shared.validated));
    if (node.child_count() == 0) return Status::Ok();
    // Child i holds [pivot(i - 1), pivot(i)). The pivots inside the range
    // are contiguous, [first, first + count); the children meeting the
    // range are first .. first + count.
    size_t first = 0;
    while (first < node.pivot_count() && !inside(node.pivot(first)) &&
           node.pivot(first) <= lower) {
      ++first;
    }
    size_t count = 0;
    while (first + count < node.pivot_count() &&
           inside(node.pivot(first + count))) {
      ++count;
    }
    ptrdiff_t chosen = -1;
    KVS_RETURN_IF_ERROR(last_at_most(
        count, [&](size_t i) { return node.pivot(first + i); }, &chosen));
    const size_t child = first + static_cast<size_t>(chosen + 1);
    offset = node.child_offset(std::min(child, node.child_count() - 1));
    size = node.ChildSizeBytes();
  }
  return Status::Corruption("tree deeper than its format allows");
}

Status TreeReader::MeasureSubtree(uint64_t offset, size_t size,
                                  std::string_view lower,
                                  const std::string* upper, unsigned depth,
                                  Edges edges, double* inside,
                                  double* weight) const {
  const bool want_inside = edges.want_inside;
  const bool rightmost = edges.rightmost;
  if (depth >= format::tree_height_max) {
    return Status::Corruption("tree deeper than its format allows");
  }
  const auto below_upper = [upper](std::string_view key) {
    return upper == nullptr || key < std::string_view(*upper);
  };
  if (size == 0) KVS_RETURN_IF_ERROR(ProbeNodeSize(source_, offset, &size));
  if (size == format::leaf_node_size_bytes) {
    std::string buffer;
    LeafNodeView leaf;
    KVS_RETURN_IF_ERROR(ReadLeafView(source_, offset, &buffer, &leaf));
    size_t count = 0;
    for (size_t i = 0; want_inside && i < leaf.entry_count(); ++i) {
      count += leaf.key(i) >= lower && below_upper(leaf.key(i)) ? 1 : 0;
    }
    *inside = leaf.entry_count() == 0
                  ? 0
                  : static_cast<double>(count) / leaf.entry_count();
    *weight = static_cast<double>(leaf.used_size_bytes()) / size;
    return Status::Ok();
  }
  NodeSource::SharedNode shared;
  KVS_RETURN_IF_ERROR(ReadShared(source_, offset, size, &shared));
  IndexNodeView node;
  KVS_RETURN_IF_ERROR(
      IndexNodeView::Parse(*shared.bytes, &node, shared.validated));
  const size_t children = node.child_count();
  if (children == 0) {
    *inside = 0;
    *weight = 0;
    return Status::Ok();
  }
  // Child i holds the keys in [pivot(i - 1), pivot(i)): the first has no
  // lower end, the last no upper one. Children wholly inside count whole,
  // wholly outside not at all; only those holding a bound are read.
  double inside_weight = 0;
  double total_weight = 0;
  for (size_t i = 0; i < children; ++i) {
    const bool last = i + 1 == children;
    const bool has_end = i < node.pivot_count();
    const bool outside = (has_end && node.pivot(i) <= lower) ||
                         (i > 0 && !below_upper(node.pivot(i - 1)));
    const bool starts_inside =
        i == 0 ? edges.starts_inside : node.pivot(i - 1) >= lower;
    const bool ends_inside =
        has_end ? upper == nullptr || node.pivot(i) <= std::string_view(*upper)
                : edges.ends_inside;
    const bool straddles =
        want_inside && !outside && !(starts_inside && ends_inside);
    double child_inside = outside || !want_inside ? 0 : 1;
    double child_weight = 1;
    // Nodes are filled left to right: only the tree's last node of each
    // level may be less than full.
    const bool child_rightmost = rightmost && last;
    if (straddles || child_rightmost) {
      const Edges child_edges{starts_inside, ends_inside, child_rightmost,
                              straddles};
      KVS_RETURN_IF_ERROR(MeasureSubtree(
          node.child_offset(i), node.ChildSizeBytes(), lower, upper, depth + 1,
          child_edges, &child_inside, &child_weight));
      if (!straddles) {
        child_inside = outside || !want_inside ? 0 : 1;
      }
      if (!child_rightmost) {
        child_weight = 1;
      }
    }
    inside_weight += child_inside * child_weight;
    total_weight += child_weight;
  }
  *inside = total_weight == 0 ? 0 : inside_weight / total_weight;
  // Relative to a full node of this level, which holds as many children as
  // fit in its bytes.
  const double full_children = static_cast<double>(children) * size /
                               std::max<size_t>(node.used_size_bytes(), 1);
  *weight = total_weight / full_children;
  return Status::Ok();
}

Status TreeReader::Descend(const Subtree& from, const std::string_view* key,
                           std::string* leaf_buffer, LeafNodeView* leaf,
                           Subtree* left) const {
  if (left != nullptr) {
    *left = Subtree();
  }
  uint64_t offset = from.offset;
  size_t size = from.size;
  const bool from_root = offset == root_offset_;
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
  TreeReader::KeyRange range = from.range;
  int expected_level = from.level;  // -1: unknown (at the root)
  // Each step goes one level down; levels are < tree_height_max.
  for (unsigned step = 0; step < format::tree_height_max; ++step) {
    const bool is_root = step == 0 && from_root;
    if (size == format::leaf_node_size_bytes) {
      if (expected_level > 0) {
        return Status::Corruption("leaf where an index node was expected");
      }
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
    const size_t child =
        key != nullptr ? node.ChildIndexFor(*key) : node.pivot_count();
    if (left != nullptr && child > 0) {
      // The subtree just left of the path, at the deepest node with one.
      left->offset = node.child_offset(child - 1);
      left->size = node.ChildSizeBytes();
      left->level = node.level() - 1;
      left->range = range;
      left->range.has_upper = true;
      left->range.upper.assign(node.pivot(child - 1));
      if (child > 1) {
        left->range.has_lower = true;
        left->range.lower.assign(node.pivot(child - 2));
      }
    }
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

void TreeReader::Iterator::SeekToLast() {
  status_ = Status::Ok();
  valid_ = false;
  if (reader_->root_offset_ == 0) {
    return;
  }
  TreeReader::Subtree root;
  root.offset = reader_->root_offset_;
  root.size = reader_->root_size_bytes_.load(std::memory_order_relaxed);
  Status status =
      reader_->Descend(root, nullptr, leaf_buffer_.get(), &leaf_, nullptr);
  if (!status.ok()) {
    Fail(std::move(status));
    return;
  }
  index_ = leaf_.entry_count() - 1;
  valid_ = true;
}

void TreeReader::Iterator::SeekForPrev(std::string_view target) {
  status_ = Status::Ok();
  valid_ = false;
  if (reader_->root_offset_ == 0) {
    return;
  }
  TreeReader::Subtree left;
  Status status = reader_->FindLeaf(target, leaf_buffer_.get(), &leaf_, &left);
  if (!status.ok()) {
    Fail(std::move(status));
    return;
  }
  size_t end = leaf_.LowerBound(target);
  if (end < leaf_.entry_count() && leaf_.key(end) == target) {
    ++end;
  }
  if (end > 0) {
    index_ = end - 1;
    valid_ = true;
    return;
  }
  // Every key of this leaf is > target (its range starts at or below the
  // target): the entry wanted is the last of the leaf before it.
  MoveToLastLeafOf(left, leaf_.key(0));
}

void TreeReader::Iterator::Prev() {
  KVS_CHECK(valid_);
  if (index_ > 0) {
    --index_;
    return;
  }
  // Leaves link forward only: the one before is found by descending to this
  // leaf again (its index nodes are usually cached) and taking the last leaf
  // of the subtree just left of the path.
  const std::string first(leaf_.key(0));
  TreeReader::Subtree left;
  LeafNodeView again;
  Status status =
      reader_->FindLeaf(first, next_leaf_buffer_.get(), &again, &left);
  if (!status.ok()) {
    Fail(std::move(status));
    return;
  }
  MoveToLastLeafOf(left, first);
}

void TreeReader::Iterator::MoveToLastLeafOf(const TreeReader::Subtree& left,
                                            std::string_view before) {
  if (left.offset == 0) {
    valid_ = false;  // the first leaf: nothing before it
    return;
  }
  const std::string bound(before);  // may point into the leaf replaced
  LeafNodeView previous;
  Status status = reader_->Descend(left, nullptr, next_leaf_buffer_.get(),
                                   &previous, nullptr);
  // Every step back lands strictly before, so a reverse scan always ends.
  if (status.ok() &&
      !(previous.key(previous.entry_count() - 1) < std::string_view(bound))) {
    status = Status::Corruption("the leaf before does not lie before");
  }
  if (!status.ok()) {
    Fail(std::move(status));
    return;
  }
  std::swap(leaf_buffer_, next_leaf_buffer_);
  leaf_ = previous;
  index_ = leaf_.entry_count() - 1;
  valid_ = true;
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
