#include "btree/pointer_rewrite.h"

#include <gtest/gtest.h>

#include <string>

#include "alloc/device_offset.h"
#include "btree/leaf_node.h"
#include "btree/tree_reader.h"
#include "testing/memory_node_store.h"
#include "testing/tree_entries.h"

namespace kvs::btree {
namespace {

namespace format = node_format;
using testing::MemoryNodeStore;
using testing::TreeEntries;

// A backup's segment map: node segments (where MemoryNodeStore puts them)
// move up by 1000, value-log segments by 2000; offsets in segments stay.
uint64_t MapOffset(uint64_t offset) {
  const uint64_t segment = alloc::SegmentOf(offset);
  const uint64_t shift =
      segment >= testing::test_log_segment_first ? 2000 : 1000;
  return alloc::DeviceOffset(segment + shift, alloc::OffsetInSegment(offset));
}

Status MapPointer(uint64_t old_offset, uint64_t* new_offset) {
  *new_offset = MapOffset(old_offset);
  return Status::Ok();
}

struct Primary {
  MemoryNodeStore store;
  uint64_t root = 0;
  TreeEntries entries;
};

void BuildPrimary(Primary* primary) {
  testing::TreeEntriesOptions options;
  options.count = 5000;
  options.inline_value_size_max = 200;
  primary->entries = testing::RandomTreeEntries(31, options);
  ASSERT_TRUE(
      testing::BuildTree(primary->entries, &primary->store, &primary->root)
          .ok());
}

std::string ReadWritten(MemoryNodeStore* store, size_t index) {
  const auto& written = store->written().at(index);
  std::string node;
  EXPECT_TRUE(store->Read(written.offset, written.size, &node).ok());
  return node;
}

// Ships every node of a tree to a "backup" through RewriteNodePointers and
// reads the backup's tree: same keys and values, every pointer mapped.
TEST(PointerRewriteTest, RewrittenTreeReadsTheSameWithMappedPointers) {
  Primary primary;
  BuildPrimary(&primary);
  MemoryNodeStore backup(/*first_segment=*/999);
  for (size_t i = 0; i < primary.store.written().size(); ++i) {
    std::string node = ReadWritten(&primary.store, i);
    const NodeHeader header = DecodeNodeHeader(node.data());
    size_t calls = 0;
    const PointerMap counting_map = [&](uint64_t old_offset,
                                        uint64_t* new_offset) {
      ++calls;
      EXPECT_NE(old_offset, 0u);
      return MapPointer(old_offset, new_offset);
    };
    ASSERT_TRUE(
        RewriteNodePointers(node.data(), node.size(), counting_map).ok());
    EXPECT_EQ(calls,
              header.pointer_count + (header.next_leaf_offset != 0 ? 1 : 0));
    backup.Put(MapOffset(primary.store.written()[i].offset), node);
  }

  TreeReader reader(&backup, MapOffset(primary.root));
  TreeReader::Iterator iterator(&reader);
  iterator.SeekToFirst();
  size_t log_entries = 0;
  for (const auto& [key, value] : primary.entries) {
    ASSERT_TRUE(iterator.Valid()) << iterator.status().ToString();
    ASSERT_EQ(iterator.key(), key);
    LeafValue expected = value.view();
    if (expected.kind == EntryKind::kPutInLog) {
      expected.log_offset = MapOffset(expected.log_offset);
      ++log_entries;
    }
    ASSERT_EQ(iterator.value(), expected);
    iterator.Next();
  }
  EXPECT_FALSE(iterator.Valid());
  EXPECT_TRUE(iterator.status().ok());
  EXPECT_GT(log_entries, 1000u);
  // Lookups descend through the rewritten child pointers.
  std::string leaf_buffer;
  LeafValue value;
  bool found = false;
  const auto& [last_key, last_value] = *primary.entries.rbegin();
  ASSERT_TRUE(reader.Get(last_key, &leaf_buffer, &value, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(value.kind, last_value.kind);
}

TEST(PointerRewriteTest, IdentityMapKeepsEveryByte) {
  Primary primary;
  BuildPrimary(&primary);
  for (size_t i = 0; i < primary.store.written().size(); i += 7) {
    const std::string original = ReadWritten(&primary.store, i);
    std::string node = original;
    ASSERT_TRUE(RewriteNodePointers(node.data(), node.size(),
                                    [](uint64_t old_offset, uint64_t* mapped) {
                                      *mapped = old_offset;
                                      return Status::Ok();
                                    })
                    .ok());
    EXPECT_EQ(node, original);
  }
}

TEST(PointerRewriteTest, LeavesTheNodeUnchangedOnAnyError) {
  Primary primary;
  BuildPrimary(&primary);
  // written()[0] is the first leaf: value-log pointers and a next leaf.
  const std::string leaf = ReadWritten(&primary.store, 0);
  ASSERT_GT(DecodeNodeHeader(leaf.data()).pointer_count, 1u);
  std::string node = leaf;

  size_t calls = 0;
  const Status failed = RewriteNodePointers(
      node.data(), node.size(), [&](uint64_t old_offset, uint64_t* new_offset) {
        if (++calls == 2) {
          return Status::NotFound("segment not received");
        }
        return MapPointer(old_offset, new_offset);
      });
  EXPECT_TRUE(failed.IsNotFound());
  EXPECT_EQ(node, leaf);

  // A value-log record moved across its segment's end.
  EXPECT_EQ(RewriteNodePointers(node.data(), node.size(),
                                [](uint64_t old_offset, uint64_t* new_offset) {
                                  *new_offset = old_offset | ((2u << 20) - 1);
                                  return Status::Ok();
                                })
                .code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(node, leaf);

  // The next leaf mapped to 0 would silently cut the leaf chain.
  const uint64_t next_leaf = DecodeNodeHeader(leaf.data()).next_leaf_offset;
  ASSERT_NE(next_leaf, 0u);
  EXPECT_EQ(RewriteNodePointers(node.data(), node.size(),
                                [&](uint64_t old_offset, uint64_t* new_offset) {
                                  *new_offset =
                                      old_offset == next_leaf ? 0 : old_offset;
                                  return Status::Ok();
                                })
                .code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(node, leaf);

  // A corrupted node is refused before the map sees any pointer.
  node[format::header_size_bytes + 3] ^= 1;
  const std::string corrupted = node;
  calls = 0;
  EXPECT_TRUE(RewriteNodePointers(node.data(), node.size(),
                                  [&](uint64_t old_offset, uint64_t* mapped) {
                                    ++calls;
                                    return MapPointer(old_offset, mapped);
                                  })
                  .IsCorruption());
  EXPECT_EQ(calls, 0u);
  EXPECT_EQ(node, corrupted);
  EXPECT_TRUE(RewriteNodePointers(node.data(), 100, MapPointer).IsCorruption());
}

// The last leaf's next pointer is 0 and stays 0 without reaching the map.
TEST(PointerRewriteTest, NoNextLeafStaysZero) {
  Primary primary;
  BuildPrimary(&primary);
  std::string last_leaf;
  for (size_t i = 0; i < primary.store.written().size(); ++i) {
    if (primary.store.written()[i].size == format::leaf_node_size_bytes) {
      last_leaf = ReadWritten(&primary.store, i);
    }
  }
  ASSERT_EQ(DecodeNodeHeader(last_leaf.data()).next_leaf_offset, 0u);
  ASSERT_TRUE(
      RewriteNodePointers(last_leaf.data(), last_leaf.size(), MapPointer).ok());
  LeafNodeView view;
  ASSERT_TRUE(LeafNodeView::Parse(last_leaf, &view).ok());
  EXPECT_EQ(view.next_leaf_offset(), 0u);
}

}  // namespace
}  // namespace kvs::btree
