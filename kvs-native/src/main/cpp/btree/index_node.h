// Index nodes: the inner levels of a device level's B+-tree.
//
// An index node is a node (btree/node_format.h) of type 2, level >= 1 and
// index_node_size_bytes. With k pivots it has k + 1 children, in the pointer
// array; child i covers the keys `key` with pivot[i-1] <= key < pivot[i]
// (no lower bound for child 0, no upper bound for child k). Children of a
// level-1 node are leaves; children of a level-n node are level n-1 index
// nodes. Each pivot entry:
//
//   offset  field       size  meaning
//   ------  ----------  ----  ----------------------------------------------
//        0  pivot size  2     P, 1..key_size_bytes_max (4096)
//        2  pivot       P     the separator between children i-1 and i
//
// The builder uses the shortest separator (ShortestSeparator), so pivots are
// usually much shorter than keys and fan-out is high. The last node of a
// level may have one child and no pivot; every other node is full.
//
// Thread safety: an IndexNodeBuilder is not thread-safe; an IndexNodeView is
// immutable and may be read from any number of threads.

#ifndef KVS_BTREE_INDEX_NODE_H_
#define KVS_BTREE_INDEX_NODE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "btree/node_format.h"
#include "util/limits.h"
#include "util/status.h"

namespace kvs::btree {

namespace index_format {

inline constexpr size_t pivot_size_size_bytes = 2;

// Three maximum-size pivots (four children) always fit, so every full index
// node has a fan-out of at least 4 and a tree's height stays logarithmic
// even with 4 KiB keys.
inline constexpr size_t full_node_pivot_count_min = 3;
static_assert(node_format::header_size_bytes +
                  (full_node_pivot_count_min + 1) *
                      node_format::pointer_size_bytes +
                  full_node_pivot_count_min *
                      (node_format::slot_size_bytes + pivot_size_size_bytes +
                       limits::key_size_bytes_max) <=
              node_format::index_node_size_bytes);

}  // namespace index_format

// The shortest byte string s with left < s <= right, for routing between
// two neighbouring children: always a prefix of `right` one byte longer than
// the common prefix of `left` and `right`, so the view points into `right`.
// Requires left < right (checked).
std::string_view ShortestSeparator(std::string_view left,
                                   std::string_view right);

// Accumulates the children of one index node and lays it out at Finish.
class IndexNodeBuilder {
 public:
  IndexNodeBuilder() = default;

  // Bytes one more pivot with its child adds to a node.
  static size_t PivotSizeBytes(std::string_view pivot);

  // Empties the builder for a new node of `level` (1 + children's level).
  void Reset(uint8_t level);

  uint8_t level() const { return level_; }
  size_t child_count() const { return child_offsets_.size(); }
  // Requires index < child_count().
  uint64_t child_offset(size_t index) const;
  size_t used_size_bytes() const;
  // Whether a pivot and its child fit in the remaining room.
  bool Fits(std::string_view pivot) const;

  // The node's leftmost child. Requires child_count() == 0.
  void AddFirstChild(uint64_t child_offset);
  // The next child, whose keys are >= pivot. Requires child_count() > 0,
  // Fits(pivot), a non-empty pivot of at most key_size_bytes_max bytes,
  // greater than the previous pivot (checked).
  void AddChild(std::string_view pivot, uint64_t child_offset);

  // Lays out and seals the node; returns its index_node_size_bytes bytes,
  // valid until the next call on the builder. Requires child_count() > 0.
  std::string_view Finish();

 private:
  uint8_t level_ = 1;
  std::vector<uint64_t> child_offsets_;  // the pointer array
  std::vector<uint16_t> pivot_offsets_;  // into pivots_
  std::string pivots_;                   // packed pivot entries, in order
  std::string node_;                     // the finished node
};

// A parsed index node. Views are made only by Parse, which validates the
// node. The view points into the node's bytes, which the caller keeps alive
// and unchanged while the view is used.
class IndexNodeView {
 public:
  IndexNodeView() = default;

  // Validates `node` (ValidateNode) and that it is an index node.
  // `validated`: ValidateNode already accepted exactly these bytes (a
  // cached node), so only the type is checked.
  static Status Parse(std::string_view node, IndexNodeView* view,
                      bool validated = false);

  uint8_t level() const { return header_.level; }
  size_t pivot_count() const { return header_.entry_count; }
  size_t child_count() const { return header_.pointer_count; }
  size_t used_size_bytes() const { return header_.used_size_bytes; }
  // Requires index < pivot_count(); points into the node.
  std::string_view pivot(size_t index) const;
  // Requires index < child_count().
  uint64_t child_offset(size_t index) const;
  // The size of this node's children: leaves at level 1.
  size_t ChildSizeBytes() const;
  // The index of the child covering `key`: the number of pivots <= key.
  size_t ChildIndexFor(std::string_view key) const;

 private:
  std::string_view node_;
  NodeHeader header_;
};

namespace internal {
// The index-node part of ValidateNode, called once the common header checks
// pass.
Status ValidateIndexEntries(std::string_view node, const NodeHeader& header);
}  // namespace internal

}  // namespace kvs::btree

#endif  // KVS_BTREE_INDEX_NODE_H_
