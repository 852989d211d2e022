// TreeReader: point lookups and ordered scans of one device level's B+-tree.
//
// Every node read is validated (ValidateNode: checksum, bounds, key order)
// before it is parsed, and the descent checks what a single node cannot
// prove about itself: each child is one level below its parent, its keys lie
// between the pivots that routed to it, and the next-leaf chain goes forward.
// A corrupted or misdirected node therefore gives Corruption, never a wrong
// answer, and a descent or scan always ends.
//
// Thread safety: a TreeReader is immutable after construction (except for a
// benign, atomic memo of the root's size), so Get and Iterators may run
// concurrently from several threads if the NodeSource allows it. One
// Iterator is used by one thread at a time.

#ifndef KVS_BTREE_TREE_READER_H_
#define KVS_BTREE_TREE_READER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "btree/leaf_node.h"
#include "util/status.h"

namespace kvs::btree {

// Where the reader's nodes come from: the engine puts a cache in front of
// the volume; tests read from memory.
class NodeSource {
 public:
  virtual ~NodeSource() = default;
  // Reads the `size` bytes at `device_offset` into *node (resized to
  // `size`). Must be safe to call concurrently when the TreeReader is shared
  // between threads.
  virtual Status Read(uint64_t device_offset, size_t size,
                      std::string* node) = 0;

  // A node shared with the source (a cache): `bytes` stay valid while held.
  // `validated` promises that ValidateNode accepted exactly these bytes, so
  // readers may skip validating them again.
  struct SharedNode {
    std::shared_ptr<const std::string> bytes;
    bool validated = false;
  };
  // Like Read, without a copy when the source keeps nodes. The default
  // reads into a fresh string (not validated).
  virtual Status ReadShared(uint64_t device_offset, size_t size,
                            SharedNode* node) {
    auto bytes = std::make_shared<std::string>();
    KVS_RETURN_IF_ERROR(Read(device_offset, size, bytes.get()));
    node->bytes = std::move(bytes);
    node->validated = false;
    return Status::Ok();
  }
};

class TreeReader {
 public:
  class Iterator;

  // Reads the tree whose root is at `root_offset` (0: the empty tree), as
  // TreeBuilder::Finish returned it. `source` must outlive the reader and
  // its iterators. No I/O happens here.
  TreeReader(NodeSource* source, uint64_t root_offset);

  TreeReader(const TreeReader&) = delete;
  TreeReader& operator=(const TreeReader&) = delete;

  uint64_t root_offset() const { return root_offset_; }

  // Looks `key` up. On OK, *found says whether the tree has an entry for the
  // key (a tombstone is an entry: value->kind == kDelete) and *value is its
  // value. *leaf_buffer receives the bytes of the leaf searched; an inline
  // value points into it, so it stays valid while *leaf_buffer is unchanged.
  Status Get(std::string_view key, std::string* leaf_buffer, LeafValue* value,
             bool* found) const;

  // Estimates which fraction of the tree's entries lie in [lower, upper)
  // (`upper` null: no upper bound), assuming the children of one node hold
  // alike many entries when full (nodes are filled left to right, so only
  // the last child of a node may be less than full; its fill is read):
  // children wholly inside or outside the bounds count whole, and only
  // those holding a bound (at most two per level) and the last are read,
  // down to their leaves, which count their keys exactly. What a region
  // split from another (whose levels hold its sibling's keys too) reports
  // as its size; *fraction is 0 for the empty tree.
  Status EstimateFraction(std::string_view lower, const std::string* upper,
                          double* fraction) const;

  // A key of the tree strictly inside (lower, upper) below which about
  // `fraction` of the tree's entries in [lower, upper) lie (0.5: the middle
  // by entries), found by descending from the root and bisecting each
  // node's pivots, then the leaf's keys, with EstimateFraction: a few dozen
  // estimates, each reading at most two paths. *found is false if the range
  // holds no such key (the empty tree, or no key inside it).
  Status KeyAtFraction(std::string_view lower, const std::string* upper,
                       double fraction, std::string* key, bool* found) const;

 private:
  // The keys a node reached through a descent may hold: [lower, upper),
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
  // A subtree to descend from: its root node, that node's size (0: not
  // known, only at the tree's root), its level (-1: not known) and the key
  // range its parent gives it.
  struct Subtree {
    uint64_t offset = 0;  // 0: none
    size_t size = 0;
    int level = -1;
    KeyRange range;
  };

  // Descends from the root to the leaf whose key range holds `key`, reading
  // it into *leaf_buffer and parsing it into *leaf. If `left` is given, it
  // receives the subtree just left of the path (offset 0 if the leaf is the
  // first). Requires a non-empty tree.
  Status FindLeaf(std::string_view key, std::string* leaf_buffer,
                  LeafNodeView* leaf, Subtree* left = nullptr) const;
  // Descends from `from` towards `*key`, or along the last children if
  // `key` is null, validating every node against its parent's range.
  // Where a subtree measured lies: whether its first and last keys' ends
  // lie inside the bounds, whether it is the last subtree of its level (the
  // only one that may be less than full), and whether its entries inside
  // the bounds are wanted (it holds a bound).
  struct Edges {
    bool starts_inside = false;
    bool ends_inside = false;
    bool rightmost = false;
    bool want_inside = true;
  };
  // Of the subtree at `offset` (`size` 0: not known): which fraction of its
  // entries lie in [lower, upper) (when `edges.want_inside`), and how full
  // it is next to a full subtree of its level (1: full; measured for the
  // rightmost only).
  Status MeasureSubtree(uint64_t offset, size_t size, std::string_view lower,
                        const std::string* upper, unsigned depth, Edges edges,
                        double* inside, double* weight) const;
  Status Descend(const Subtree& from, const std::string_view* key,
                 std::string* leaf_buffer, LeafNodeView* leaf,
                 Subtree* left) const;

  NodeSource* const source_;
  const uint64_t root_offset_;
  // The root may be a leaf or an index node, and the root offset does not
  // say which: the first descent reads a leaf's worth of bytes, looks at the
  // type and remembers the size (0 = not known yet).
  mutable std::atomic<size_t> root_size_bytes_{0};
};

// An ordered scan over the entries of a tree, forward following next-leaf
// pointers (one node read per leaf), backward descending again from the root
// once per leaf (index nodes are mostly cached). Tombstones are returned like
// any entry. Positioned nowhere (Valid() false) until a Seek.
class TreeReader::Iterator {
 public:
  // `reader` must outlive the iterator.
  explicit Iterator(const TreeReader* reader);

  Iterator(const Iterator&) = delete;
  Iterator& operator=(const Iterator&) = delete;

  // Whether the iterator is at an entry. False at the end and after an
  // error (see status()).
  bool Valid() const { return valid_; }
  // Positions at the first entry.
  void SeekToFirst();
  // Positions at the first entry whose key is >= target.
  void Seek(std::string_view target);
  // Moves to the next entry. Requires Valid().
  void Next();
  // Positions at the last entry.
  void SeekToLast();
  // Positions at the last entry whose key is <= target.
  void SeekForPrev(std::string_view target);
  // Moves to the previous entry. Requires Valid().
  void Prev();

  // The current entry. Require Valid(); the views stay valid until the
  // iterator moves.
  std::string_view key() const;
  LeafValue value() const;

  // OK unless a read or a validation failed; the iterator is then invalid.
  Status status() const { return status_; }

 private:
  void MoveToNextLeaf();
  // Moves to the last entry of the last leaf of `left` (the subtree before
  // the current leaf), whose keys must all be < `before`; invalid if `left`
  // is none.
  void MoveToLastLeafOf(const TreeReader::Subtree& left,
                        std::string_view before);
  void Fail(Status status);

  const TreeReader* const reader_;
  // Leaves live in separately allocated strings so that swapping them keeps
  // the bytes (and the view into them) in place.
  std::unique_ptr<std::string> leaf_buffer_;
  std::unique_ptr<std::string> next_leaf_buffer_;
  LeafNodeView leaf_;
  size_t index_ = 0;
  bool valid_ = false;
  Status status_;
};

}  // namespace kvs::btree

#endif  // KVS_BTREE_TREE_READER_H_
