#include "btree/tree_builder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "alloc/device_offset.h"
#include "testing/memory_node_store.h"
#include "testing/tree_entries.h"

namespace kvs::btree {
namespace {

namespace format = node_format;
using testing::MemoryNodeStore;
using testing::TreeEntries;
using testing::TreeValue;

// A node found by walking the tree from the root, with the pivot that
// routes to it (none for the leftmost node of a level).
struct WalkedNode {
  uint64_t offset = 0;
  std::string bytes;
  bool has_lower = false;
  std::string lower;
};

// The tree's nodes level by level from the root down, each level left to
// right; the last level is the leaves. Checks every node parses and is at
// the level its parent implies.
std::vector<std::vector<WalkedNode>> WalkTree(MemoryNodeStore* store,
                                              uint64_t root, uint32_t height) {
  std::vector<std::vector<WalkedNode>> levels;
  if (root == 0) {
    return levels;
  }
  levels.push_back({WalkedNode{root, "", false, ""}});
  for (uint32_t depth = 0; depth < height; ++depth) {
    const bool is_leaf_level = depth + 1 == height;
    std::vector<WalkedNode> children;
    for (WalkedNode& node : levels.back()) {
      const size_t size = is_leaf_level ? format::leaf_node_size_bytes
                                        : format::index_node_size_bytes;
      EXPECT_TRUE(store->Read(node.offset, size, &node.bytes).ok());
      if (is_leaf_level) {
        LeafNodeView leaf;
        EXPECT_TRUE(LeafNodeView::Parse(node.bytes, &leaf).ok());
        continue;
      }
      IndexNodeView index;
      EXPECT_TRUE(IndexNodeView::Parse(node.bytes, &index).ok());
      EXPECT_EQ(index.level(), height - 1 - depth);
      for (size_t i = 0; i < index.child_count(); ++i) {
        WalkedNode child{index.child_offset(i), "", node.has_lower, node.lower};
        if (i > 0) {
          child.has_lower = true;
          child.lower = std::string(index.pivot(i - 1));
        }
        children.push_back(std::move(child));
      }
    }
    if (!is_leaf_level) {
      levels.push_back(std::move(children));
    }
  }
  return levels;
}

// Keys with a long shared prefix, as in real data sets, so that separators
// are long too and 100k entries need three levels.
TreeEntries SequentialEntries(size_t count) {
  TreeEntries entries;
  for (size_t i = 0; i < count; ++i) {
    char key[64];
    std::snprintf(key, sizeof(key), "user/region-0042/%016zu", i * 7);
    TreeValue value;
    if (i % 6 == 0) {
      value.kind = EntryKind::kDelete;
    } else if (i % 6 == 1) {
      value.kind = EntryKind::kPutInLog;
      value.log_offset = alloc::DeviceOffset(5000 + i % 3, i % 1000);
      value.log_record_size_bytes = 1000 + i % 50;
    } else {
      value.kind = EntryKind::kPutInline;
      value.inline_bytes = std::string(40 + i % 41, static_cast<char>(i));
    }
    entries.emplace(key, std::move(value));
  }
  return entries;
}

TEST(TreeBuilderTest, EmptyTreeHasRootZeroAndWritesNothing) {
  MemoryNodeStore store;
  TreeBuilder builder(&store);
  uint64_t root = 1;
  ASSERT_TRUE(builder.Finish(&root).ok());
  EXPECT_EQ(root, 0u);
  EXPECT_TRUE(store.written().empty());
  EXPECT_EQ(store.pending_count(), 0u);
  EXPECT_EQ(builder.stats().height, 0u);
  EXPECT_EQ(builder.stats().node_bytes, 0u);
}

TEST(TreeBuilderTest, OneEntryTreeIsOneLeaf) {
  MemoryNodeStore store;
  TreeBuilder builder(&store);
  ASSERT_TRUE(builder.Add("only", LeafValue::Inline("value")).ok());
  uint64_t root = 0;
  ASSERT_TRUE(builder.Finish(&root).ok());
  ASSERT_EQ(store.written().size(), 1u);
  EXPECT_EQ(root, store.written()[0].offset);
  EXPECT_EQ(builder.stats().height, 1u);
  EXPECT_EQ(builder.stats().leaf_count, 1u);
  EXPECT_EQ(builder.stats().index_node_count, 0u);
  EXPECT_EQ(builder.stats().node_bytes, format::leaf_node_size_bytes);
  std::string node;
  ASSERT_TRUE(store.Read(root, format::leaf_node_size_bytes, &node).ok());
  LeafNodeView leaf;
  ASSERT_TRUE(LeafNodeView::Parse(node, &leaf).ok());
  EXPECT_EQ(leaf.entry_count(), 1u);
  EXPECT_EQ(leaf.next_leaf_offset(), 0u);
  EXPECT_EQ(leaf.key(0), "only");
  EXPECT_EQ(leaf.value(0).inline_bytes, "value");
}

// Every leaf but the last is full: the first entry of the next leaf would
// not have fit. The next-leaf chain visits every leaf once, in key order,
// and the leaves hold exactly the entries added.
TEST(TreeBuilderTest, LeavesAreFullAndChainedInKeyOrder) {
  testing::TreeEntriesOptions options;
  options.count = 6000;
  options.inline_value_size_max = 300;
  const TreeEntries entries = testing::RandomTreeEntries(21, options);
  MemoryNodeStore store;
  uint64_t root = 0;
  BuildStats stats;
  ASSERT_TRUE(testing::BuildTree(entries, &store, &root, &stats).ok());
  const auto levels = WalkTree(&store, root, stats.height);
  ASSERT_EQ(levels.size(), stats.height);
  const std::vector<WalkedNode>& leaves = levels.back();
  ASSERT_EQ(leaves.size(), stats.leaf_count);
  ASSERT_GT(leaves.size(), 20u);

  auto entry = entries.begin();
  size_t used_bytes_total = 0;
  std::set<uint64_t> visited;
  for (size_t i = 0; i < leaves.size(); ++i) {
    LeafNodeView leaf;
    ASSERT_TRUE(LeafNodeView::Parse(leaves[i].bytes, &leaf).ok());
    EXPECT_TRUE(visited.insert(leaves[i].offset).second);
    const bool is_last = i + 1 == leaves.size();
    EXPECT_EQ(leaf.next_leaf_offset(), is_last ? 0 : leaves[i + 1].offset);
    for (size_t e = 0; e < leaf.entry_count(); ++e, ++entry) {
      ASSERT_NE(entry, entries.end());
      ASSERT_EQ(leaf.key(e), entry->first);
      ASSERT_EQ(leaf.value(e), entry->second.view());
    }
    used_bytes_total += leaf.used_size_bytes();
    if (!is_last) {
      // `entry` is now the first entry of the next leaf.
      EXPECT_GT(
          leaf.used_size_bytes() + LeafNodeBuilder::EntrySizeBytes(
                                       entry->first, entry->second.view()),
          format::leaf_node_size_bytes)
          << "leaf " << i << " had room for the next entry";
    }
  }
  EXPECT_EQ(entry, entries.end());
  // The largest entry is under 400 bytes, so full leaves are > 95% used.
  EXPECT_GT(static_cast<double>(used_bytes_total) /
                (leaves.size() * format::leaf_node_size_bytes),
            0.95);
}

// 100k entries make a tree of height >= 3 whose index nodes are full but
// for the last of each level (the next node's first pivot would not fit).
TEST(TreeBuilderTest, HundredThousandEntriesBuildFullIndexLevels) {
  const TreeEntries entries = SequentialEntries(100000);
  MemoryNodeStore store;
  uint64_t root = 0;
  BuildStats stats;
  ASSERT_TRUE(testing::BuildTree(entries, &store, &root, &stats).ok());
  EXPECT_GE(stats.height, 3u);
  EXPECT_EQ(stats.entry_count, entries.size());
  EXPECT_EQ(stats.tombstone_count, (entries.size() + 5) / 6);
  EXPECT_EQ(stats.log_pointer_count, (entries.size() + 4) / 6);
  EXPECT_EQ(stats.leaf_count + stats.index_node_count, store.written().size());
  EXPECT_EQ(stats.node_bytes,
            stats.leaf_count * format::leaf_node_size_bytes +
                stats.index_node_count * format::index_node_size_bytes);
  const auto levels = WalkTree(&store, root, stats.height);
  ASSERT_EQ(levels.size(), stats.height);
  size_t index_nodes = 0;
  for (size_t depth = 0; depth + 1 < levels.size(); ++depth) {
    const auto& level = levels[depth];
    index_nodes += level.size();
    for (size_t j = 0; j + 1 < level.size(); ++j) {
      IndexNodeView node;
      ASSERT_TRUE(IndexNodeView::Parse(level[j].bytes, &node).ok());
      ASSERT_TRUE(level[j + 1].has_lower);
      EXPECT_GT(node.used_size_bytes() +
                    IndexNodeBuilder::PivotSizeBytes(level[j + 1].lower),
                format::index_node_size_bytes)
          << "index node " << j << " at depth " << depth << " had room";
    }
  }
  EXPECT_EQ(index_nodes, stats.index_node_count);
  EXPECT_EQ(levels.back().size(), stats.leaf_count);
}

// Keys of 4 KiB that differ only in their last bytes make 4 KiB pivots:
// one entry per leaf, three pivots per index node, a tall tree.
TEST(TreeBuilderTest, MaximumSizeKeysMakeMaximumSizePivots) {
  MemoryNodeStore store;
  TreeBuilder builder(&store);
  const std::string value(leaf_format::leaf_inline_value_size_bytes_max, 'v');
  const size_t count = 300;
  for (size_t i = 0; i < count; ++i) {
    std::string key(limits::key_size_bytes_max, '\xff');
    key[key.size() - 2] = static_cast<char>(i >> 8);
    key[key.size() - 1] = static_cast<char>(i);
    ASSERT_TRUE(builder.Add(key, LeafValue::Inline(value)).ok());
  }
  uint64_t root = 0;
  ASSERT_TRUE(builder.Finish(&root).ok());
  const BuildStats& stats = builder.stats();
  EXPECT_EQ(stats.leaf_count, count);
  // 300 leaves -> 75 -> 19 -> 5 -> 2 -> 1 index nodes of four children.
  EXPECT_EQ(stats.height, 6u);
  const auto levels = WalkTree(&store, root, stats.height);
  ASSERT_EQ(levels.size(), 6u);
  for (size_t depth = 0; depth + 1 < levels.size(); ++depth) {
    for (size_t j = 0; j + 1 < levels[depth].size(); ++j) {
      IndexNodeView node;
      ASSERT_TRUE(IndexNodeView::Parse(levels[depth][j].bytes, &node).ok());
      EXPECT_EQ(node.pivot_count(), index_format::full_node_pivot_count_min);
      EXPECT_GE(node.pivot(0).size(), limits::key_size_bytes_max - 1);
    }
  }
}

TEST(TreeBuilderTest, InvalidEntriesAreRefusedAndTheBuildGoesOn) {
  MemoryNodeStore store;
  TreeBuilder builder(&store);
  ASSERT_TRUE(builder.Add("a", LeafValue::Tombstone()).ok());
  const std::string long_key(limits::key_size_bytes_max + 1, 'b');
  EXPECT_EQ(builder.Add(long_key, LeafValue::Tombstone()).code(),
            Status::Code::kInvalidArgument);
  const std::string long_value(
      leaf_format::leaf_inline_value_size_bytes_max + 1, 'v');
  EXPECT_EQ(builder.Add("b", LeafValue::Inline(long_value)).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(builder.Add("b", LeafValue::InLog(0, 10)).code(),
            Status::Code::kInvalidArgument);
  // "b" was never added, so it may come now.
  ASSERT_TRUE(builder.Add("b", LeafValue::Inline("fine")).ok());
  uint64_t root = 0;
  ASSERT_TRUE(builder.Finish(&root).ok());
  EXPECT_EQ(builder.stats().entry_count, 2u);
}

TEST(TreeBuilderTest, SinkErrorsAreSticky) {
  const TreeEntries entries = SequentialEntries(2000);
  MemoryNodeStore store;
  store.FailWriteAfter(3);
  TreeBuilder builder(&store);
  Status status;
  for (const auto& [key, value] : entries) {
    status = builder.Add(key, value.view());
    if (!status.ok()) {
      break;
    }
  }
  EXPECT_EQ(status.code(), Status::Code::kIoError);
  EXPECT_EQ(store.written().size(), 3u);
  store.FailWriteAfter(std::nullopt);
  EXPECT_EQ(builder.Add("\xff\xff", LeafValue::Tombstone()).code(),
            Status::Code::kIoError);
  uint64_t root = 0;
  EXPECT_EQ(builder.Finish(&root).code(), Status::Code::kIoError);

  MemoryNodeStore failing_store;
  failing_store.FailAllocateAfter(0);
  TreeBuilder first_add_fails(&failing_store);
  EXPECT_EQ(first_add_fails.Add("a", LeafValue::Tombstone()).code(),
            Status::Code::kIoError);
  EXPECT_EQ(first_add_fails.Finish(&root).code(), Status::Code::kIoError);
}

// The builder allocates each leaf when it opens it, so at most one offset
// is allocated ahead of its write, and none after Finish.
TEST(TreeBuilderTest, AtMostOneNodeIsAllocatedAhead) {
  const TreeEntries entries = SequentialEntries(5000);
  MemoryNodeStore store;
  TreeBuilder builder(&store);
  for (const auto& [key, value] : entries) {
    ASSERT_TRUE(builder.Add(key, value.view()).ok());
    ASSERT_EQ(store.pending_count(), 1u);
  }
  uint64_t root = 0;
  ASSERT_TRUE(builder.Finish(&root).ok());
  EXPECT_EQ(store.pending_count(), 0u);
  EXPECT_EQ(store.written().back().offset, root);  // the root comes last
}

TEST(TreeBuilderDeathTest, KeysOutOfOrderAreABug) {
  MemoryNodeStore store;
  TreeBuilder builder(&store);
  ASSERT_TRUE(builder.Add("m", LeafValue::Tombstone()).ok());
  EXPECT_DEATH((void)builder.Add("a", LeafValue::Tombstone()), "increasing");
  EXPECT_DEATH((void)builder.Add("m", LeafValue::Tombstone()), "increasing");
}

}  // namespace
}  // namespace kvs::btree
