// Test helper: sets of B+-tree entries that own their bytes, random ones
// (keys with '\x00' and '\xff', every entry kind), and building a tree from
// them into a MemoryNodeStore.

#ifndef KVS_TESTING_TREE_ENTRIES_H_
#define KVS_TESTING_TREE_ENTRIES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "btree/leaf_node.h"
#include "btree/tree_builder.h"
#include "testing/memory_node_store.h"
#include "util/status.h"

namespace kvs::testing {

// A LeafValue that owns its inline bytes.
struct TreeValue {
  btree::EntryKind kind = btree::EntryKind::kDelete;
  std::string inline_bytes;
  uint64_t log_offset = 0;
  uint32_t log_record_size_bytes = 0;

  static TreeValue From(const btree::LeafValue& value);
  // A view of this value, valid while it lives unchanged.
  btree::LeafValue view() const;
};

using TreeEntries = std::map<std::string, TreeValue>;

// Value-log records of random entries live in segments from this one on,
// far from where MemoryNodeStore puts nodes.
inline constexpr uint64_t test_log_segment_first = 4096;

struct TreeEntriesOptions {
  size_t count = 1000;
  size_t key_size_min = 0;
  size_t key_size_max = 24;
  size_t inline_value_size_max = 64;
};

// Random entries: about half inline puts, a quarter in-log puts and a
// quarter tombstones. Fewer than `count` when random keys collide.
TreeEntries RandomTreeEntries(uint64_t seed, const TreeEntriesOptions& options);

// Adds every entry to a TreeBuilder writing to `store` and finishes it.
Status BuildTree(const TreeEntries& entries, MemoryNodeStore* store,
                 uint64_t* root_offset, btree::BuildStats* stats = nullptr);

}  // namespace kvs::testing

#endif  // KVS_TESTING_TREE_ENTRIES_H_
