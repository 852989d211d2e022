// Leaf nodes: the entries of a device level, each key with its newest value.
//
// A leaf is a node (btree/node_format.h) of type 1, level 0 and
// leaf_node_size_bytes. Its pointer array holds one value-log pointer per
// put-in-log entry, in entry order. Each entry (no LSN: a device level keeps
// only the newest version of a key):
//
//   offset  field          size  meaning
//   ------  -------------  ----  -------------------------------------------
//        0  kind           1     1 = put-inline, 2 = put-in-log,
//                                3 = delete (tombstone)
//        1  key size       2     K, at most key_size_bytes_max (4096)
//        3  key            K     the key
//   put-inline:
//      3+K  value size     4     V, at most leaf_inline_value_size_bytes_max
//      7+K  value          V     the value
//   put-in-log:
//      3+K  pointer index  2     index of the record's device offset in the
//                                pointer array: the j-th put-in-log entry of
//                                a leaf has index j
//      5+K  record size    4     bytes of the log record at that offset
//   delete: nothing more
//
// Thread safety: a LeafNodeBuilder is not thread-safe; a LeafNodeView is
// immutable and may be read from any number of threads.

#ifndef KVS_BTREE_LEAF_NODE_H_
#define KVS_BTREE_LEAF_NODE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "btree/node_format.h"
#include "util/limits.h"
#include "util/status.h"

namespace kvs::btree {

enum class EntryKind : uint8_t { kPutInline = 1, kPutInLog = 2, kDelete = 3 };

namespace leaf_format {

inline constexpr size_t kind_size_bytes = 1;
inline constexpr size_t key_size_size_bytes = 2;
inline constexpr size_t value_size_size_bytes = 4;
inline constexpr size_t pointer_index_size_bytes = 2;
inline constexpr size_t record_size_size_bytes = 4;

// The largest inline value: what an empty leaf has room for next to one
// maximum-size key, so that every valid entry fits a leaf on its own:
// 8192 - 32 (header) - 2 (slot) - 1 (kind) - 2 (key size) - 4096 (key)
// - 4 (value size) = 4055 bytes. Larger values belong in a value log.
inline constexpr size_t leaf_inline_value_size_bytes_max =
    node_format::leaf_node_size_bytes - node_format::header_size_bytes -
    node_format::slot_size_bytes - kind_size_bytes - key_size_size_bytes -
    limits::key_size_bytes_max - value_size_size_bytes;
static_assert(leaf_inline_value_size_bytes_max == 4055);

// A put-in-log entry with a maximum-size key also fits an empty leaf.
static_assert(node_format::header_size_bytes + node_format::pointer_size_bytes +
                  node_format::slot_size_bytes + kind_size_bytes +
                  key_size_size_bytes + limits::key_size_bytes_max +
                  pointer_index_size_bytes + record_size_size_bytes <=
              node_format::leaf_node_size_bytes);

}  // namespace leaf_format

// The value of one entry. `inline_bytes` is a view: its owner is whoever
// produced the LeafValue (the caller for TreeBuilder::Add, the node buffer
// for a view or reader). Fields that do not belong to `kind` are zero/empty,
// so that == compares values meaningfully.
struct LeafValue {
  EntryKind kind = EntryKind::kDelete;
  std::string_view inline_bytes;       // kPutInline: the value itself
  uint64_t log_offset = 0;             // kPutInLog: the record's offset
  uint32_t log_record_size_bytes = 0;  // kPutInLog: the record's size

  static LeafValue Inline(std::string_view bytes) {
    return {EntryKind::kPutInline, bytes, 0, 0};
  }
  static LeafValue InLog(uint64_t offset, uint32_t record_size_bytes) {
    return {EntryKind::kPutInLog, {}, offset, record_size_bytes};
  }
  static LeafValue Tombstone() { return {EntryKind::kDelete, {}, 0, 0}; }

  bool operator==(const LeafValue& other) const = default;
};

// InvalidArgument when (key, value) cannot be stored in a leaf: a key over
// key_size_bytes_max, an inline value over leaf_inline_value_size_bytes_max,
// an unknown kind, or a log pointer IsValidLogPointer rejects.
Status CheckLeafEntry(std::string_view key, const LeafValue& value);

// Accumulates the entries of one leaf and lays the node out at Finish.
class LeafNodeBuilder {
 public:
  LeafNodeBuilder() = default;

  // Bytes an entry takes in a leaf, its slot and pointer included.
  static size_t EntrySizeBytes(std::string_view key, const LeafValue& value);

  // Empties the builder for the next leaf.
  void Reset();

  bool empty() const { return entry_offsets_.empty(); }
  size_t entry_count() const { return entry_offsets_.size(); }
  // Bytes the node would use if finished now (header included).
  size_t used_size_bytes() const;
  // Whether the entry fits in the remaining room.
  bool Fits(std::string_view key, const LeafValue& value) const;

  // Appends an entry. Requires CheckLeafEntry(key, value).ok(),
  // Fits(key, value) and key greater than the previous key (checked).
  void Add(std::string_view key, const LeafValue& value);

  // Lays out and seals the leaf (next leaf pointer included: 0 for the
  // last leaf) and returns its leaf_node_size_bytes bytes, valid until the
  // next call on the builder. Requires !empty().
  std::string_view Finish(uint64_t next_leaf_offset);

 private:
  std::string_view LastKey() const;

  std::vector<uint64_t> log_offsets_;    // the pointer array
  std::vector<uint16_t> entry_offsets_;  // into entries_
  std::string entries_;                  // packed entries, in order
  std::string node_;                     // the finished node
};

// A parsed leaf. Views are made only by Parse, which validates the node, so
// accessors never need to check bounds. The view points into the node's
// bytes, which the caller keeps alive and unchanged while the view is used.
class LeafNodeView {
 public:
  LeafNodeView() = default;

  // Validates `node` (ValidateNode) and that it is a leaf.
  // `validated`: ValidateNode already accepted exactly these bytes (a
  // cached node), so only the type is checked.
  static Status Parse(std::string_view node, LeafNodeView* view,
                      bool validated = false);

  size_t entry_count() const { return header_.entry_count; }
  uint64_t next_leaf_offset() const { return header_.next_leaf_offset; }
  size_t used_size_bytes() const { return header_.used_size_bytes; }
  // Requires index < entry_count(). Views point into the node.
  std::string_view key(size_t index) const;
  LeafValue value(size_t index) const;
  // The index of the first entry with a key >= `key`; entry_count() if none.
  size_t LowerBound(std::string_view key) const;

 private:
  std::string_view node_;
  NodeHeader header_;
};

namespace internal {
// The leaf part of ValidateNode, called once the common header checks pass.
Status ValidateLeafEntries(std::string_view node, const NodeHeader& header);
}  // namespace internal

}  // namespace kvs::btree

#endif  // KVS_BTREE_LEAF_NODE_H_
