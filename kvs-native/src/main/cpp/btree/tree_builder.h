// TreeBuilder: writes a device level's B+-tree bottom-up from sorted entries.
//
// Compaction merges its inputs into one stream of entries in strictly
// increasing key order and hands them to Add one by one. The builder never
// reads a node back: it keeps one open leaf and one open index node per index
// level (Parallax's bottom-up build). A leaf is finished when the next entry
// does not fit it, so every leaf but the last is full; an index node is
// finished when the next pivot does not fit, and its finished children's
// pointers and separators go up one level the same way.
//
// Each leaf's next-leaf pointer must name the leaf after it, so the builder
// allocates a leaf's offset when it opens the leaf and writes the previous
// leaf only then. Index nodes are allocated when they are finished (nothing
// points at them before). Consequently writes do not come in allocation
// order: at most one leaf has been allocated but not yet written.
//
// Thread safety: none; one builder is used by one thread at a time.

#ifndef KVS_BTREE_TREE_BUILDER_H_
#define KVS_BTREE_TREE_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "btree/index_node.h"
#include "btree/leaf_node.h"
#include "util/status.h"

namespace kvs::btree {

// Where the builder's nodes go: the engine packs them into segments of the
// volume (and ships finished segments to backups); tests keep them in memory.
class NodeSink {
 public:
  virtual ~NodeSink() = default;
  // Returns the device offset where the next node of `size` bytes will be
  // written. The sink packs nodes into segments it allocates; a node never
  // spans segments, and the offset must be non-zero and aligned for direct
  // I/O (the builder checks: a violation is a bug in the sink).
  virtual Status Allocate(size_t size, uint64_t* device_offset) = 0;
  // Hands a finished node (exactly `size` bytes, checksum set) for an offset
  // Allocate returned. `node` is valid only during the call. Every allocated
  // offset is written exactly once before Finish returns OK.
  virtual Status Write(uint64_t device_offset, std::string_view node) = 0;
};

// What a build produced.
struct BuildStats {
  uint64_t entry_count = 0;
  uint64_t tombstone_count = 0;
  uint64_t log_pointer_count = 0;
  uint64_t leaf_count = 0;
  uint64_t index_node_count = 0;
  uint64_t key_bytes = 0;           // sum of key sizes
  uint64_t inline_value_bytes = 0;  // sum of inline value sizes
  uint64_t node_bytes = 0;          // bytes of all nodes written
  uint32_t height = 0;              // levels incl. leaves; 0 for an empty tree
};

class TreeBuilder {
 public:
  // `sink` must outlive the builder.
  explicit TreeBuilder(NodeSink* sink);

  TreeBuilder(const TreeBuilder&) = delete;
  TreeBuilder& operator=(const TreeBuilder&) = delete;

  // Appends an entry. Keys must strictly increase (a programmer error
  // otherwise: checked). InvalidArgument, and nothing added, when
  // CheckLeafEntry rejects the entry (key over 4 KiB, inline value over
  // leaf_inline_value_size_bytes_max, a bad log pointer). A sink error is
  // returned and kept: every later call returns it again.
  Status Add(std::string_view key, const LeafValue& value);

  // Writes the remaining open nodes and sets *root_offset to the root: 0 for
  // an empty tree, the leaf itself for a one-leaf tree. Must be called once,
  // and no Add after it.
  Status Finish(uint64_t* root_offset);

  const BuildStats& stats() const { return stats_; }

 private:
  // One level of index nodes: the open node, and the separator that routes
  // to it from the level above (absent for the first node of a level).
  struct IndexLevel {
    IndexNodeBuilder node;
    bool has_left_separator = false;
    std::string left_separator;
    uint64_t finished_node_count = 0;
  };

  Status Allocate(size_t size, uint64_t* device_offset);
  Status WriteNode(uint64_t device_offset, std::string_view node);
  // Finishes the open leaf, pointing at `next_leaf_offset`, and adds it to
  // the first index level.
  Status FinishLeaf(uint64_t next_leaf_offset);
  // Adds a finished child to index level `level_index` (0 holds level-1
  // nodes), finishing that level's open node first if the child's separator
  // does not fit.
  Status AddChild(size_t level_index, bool has_separator,
                  std::string_view separator, uint64_t child_offset);
  // Finishes level `level_index`'s open node and returns where it went.
  Status FinishIndexNode(size_t level_index, uint64_t* node_offset);

  NodeSink* const sink_;
  Status sticky_error_;
  bool finished_ = false;

  LeafNodeBuilder leaf_;
  uint64_t leaf_offset_ = 0;  // allocated when the leaf opens
  bool leaf_has_left_separator_ = false;
  std::string leaf_left_separator_;
  bool has_last_key_ = false;
  std::string last_key_;

  std::vector<IndexLevel> index_levels_;  // [0] is level 1
  BuildStats stats_;
};

}  // namespace kvs::btree

#endif  // KVS_BTREE_TREE_BUILDER_H_
