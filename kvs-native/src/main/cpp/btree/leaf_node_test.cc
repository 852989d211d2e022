#include "btree/leaf_node.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "alloc/device_offset.h"
#include "btree/index_node.h"
#include "testing/random_keys.h"

namespace kvs::btree {
namespace {

namespace format = node_format;
namespace lf = leaf_format;

using Entry = std::pair<std::string, LeafValue>;

// Keys with \x00 and \xff, the empty key, and keys that are prefixes of
// each other, in increasing order, with every kind of value.
std::vector<Entry> AwkwardEntries() {
  return {
      {std::string(), LeafValue::Inline("value of the empty key")},
      {std::string("\x00", 1), LeafValue::Tombstone()},
      {std::string("\x00\x00", 2), LeafValue::Inline(std::string_view())},
      {std::string("\x00\xff", 2),
       LeafValue::InLog(alloc::DeviceOffset(77, 5), 1)},
      {"k", LeafValue::Inline(std::string_view("\xff\x00v", 3))},
      {"ke", LeafValue::Tombstone()},
      {"key", LeafValue::InLog(alloc::DeviceOffset(1, 4096), 1 << 20)},
      {"key\x01", LeafValue::Inline("x")},
      {"\xff", LeafValue::InLog(alloc::DeviceOffset(2, 0), 2u << 20)},
      {"\xff\xff\xff", LeafValue::Tombstone()},
  };
}

std::string BuildLeaf(const std::vector<Entry>& entries,
                      uint64_t next_leaf_offset) {
  LeafNodeBuilder builder;
  for (const auto& [key, value] : entries) {
    builder.Add(key, value);
  }
  return std::string(builder.Finish(next_leaf_offset));
}

TEST(LeafNodeTest, RoundTripsEveryKindAndAwkwardKeys) {
  const std::vector<Entry> entries = AwkwardEntries();
  const uint64_t next = alloc::DeviceOffset(12, 3 * 8192);
  const std::string node = BuildLeaf(entries, next);
  ASSERT_EQ(node.size(), format::leaf_node_size_bytes);
  LeafNodeView view;
  ASSERT_TRUE(LeafNodeView::Parse(node, &view).ok());
  ASSERT_EQ(view.entry_count(), entries.size());
  EXPECT_EQ(view.next_leaf_offset(), next);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(view.key(i), entries[i].first) << i;
    EXPECT_EQ(view.value(i), entries[i].second) << i;
  }
}

TEST(LeafNodeTest, LowerBoundAtBetweenBeforeAndAfterKeys) {
  const std::vector<Entry> entries = AwkwardEntries();
  const std::string node = BuildLeaf(entries, 0);
  LeafNodeView view;
  ASSERT_TRUE(LeafNodeView::Parse(node, &view).ok());
  EXPECT_EQ(view.next_leaf_offset(), 0u);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(view.LowerBound(entries[i].first), i);
    // Appending \x00 gives the smallest key after entries[i].
    EXPECT_EQ(view.LowerBound(entries[i].first + '\0'), i + 1);
  }
  EXPECT_EQ(view.LowerBound("ka"), 5u);  // between "k" and "ke"
  EXPECT_EQ(view.LowerBound("\xff\xff\xff\xff"), entries.size());
}

TEST(LeafNodeTest, LargestInlineValueWithLargestKeyFillsALeafExactly) {
  const std::string key(limits::key_size_bytes_max, '\xff');
  const std::string value(lf::leaf_inline_value_size_bytes_max, 'v');
  EXPECT_TRUE(CheckLeafEntry(key, LeafValue::Inline(value)).ok());
  LeafNodeBuilder builder;
  ASSERT_TRUE(builder.Fits(key, LeafValue::Inline(value)));
  builder.Add(key, LeafValue::Inline(value));
  EXPECT_EQ(builder.used_size_bytes(), format::leaf_node_size_bytes);
  EXPECT_FALSE(builder.Fits(std::string_view(), LeafValue::Tombstone()));
  LeafNodeView view;
  const std::string node(builder.Finish(0));
  ASSERT_TRUE(LeafNodeView::Parse(node, &view).ok());
  EXPECT_EQ(view.key(0), key);
  EXPECT_EQ(view.value(0).inline_bytes, value);
}

TEST(LeafNodeTest, CheckLeafEntryRejectsWhatDoesNotFit) {
  const std::string key(limits::key_size_bytes_max, 'k');
  EXPECT_EQ(CheckLeafEntry(key + "k", LeafValue::Tombstone()).code(),
            Status::Code::kInvalidArgument);
  const std::string value(lf::leaf_inline_value_size_bytes_max + 1, 'v');
  EXPECT_EQ(CheckLeafEntry("k", LeafValue::Inline(value)).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(CheckLeafEntry("k", LeafValue::InLog(0, 10)).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(CheckLeafEntry("k", LeafValue::InLog(alloc::DeviceOffset(1, 0), 0))
                .code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(
      CheckLeafEntry("k", LeafValue::InLog(alloc::DeviceOffset(1, 1), 2u << 20))
          .code(),
      Status::Code::kInvalidArgument);
  LeafValue unknown = LeafValue::Tombstone();
  unknown.kind = static_cast<EntryKind>(9);
  EXPECT_EQ(CheckLeafEntry("k", unknown).code(),
            Status::Code::kInvalidArgument);
  EXPECT_TRUE(CheckLeafEntry(key, LeafValue::InLog(1, 1)).ok());
}

// EntrySizeBytes is exactly what an entry adds, and Fits says no exactly
// when the entry would overflow the leaf.
TEST(LeafNodeTest, FitsIsExact) {
  testing::RandomBytes random(7);
  LeafNodeBuilder builder;
  for (uint32_t i = 0;; ++i) {
    // A big-endian counter keeps keys increasing; random tails vary sizes.
    std::string key(4, '\0');
    for (int byte = 0; byte < 4; ++byte) {
      key[byte] = static_cast<char>(i >> (24 - 8 * byte));
    }
    key += random.Key(0, 40);
    const std::string value = random.Bytes(random.Uniform(200));
    const LeafValue leaf_value =
        i % 3 == 0   ? LeafValue::Inline(value)
        : i % 3 == 1 ? LeafValue::InLog(alloc::DeviceOffset(4, 64), 64)
                     : LeafValue::Tombstone();
    const size_t before = builder.used_size_bytes();
    const size_t entry_size = LeafNodeBuilder::EntrySizeBytes(key, leaf_value);
    if (!builder.Fits(key, leaf_value)) {
      EXPECT_GT(before + entry_size, format::leaf_node_size_bytes);
      break;
    }
    builder.Add(key, leaf_value);
    EXPECT_EQ(builder.used_size_bytes(), before + entry_size);
  }
  EXPECT_GT(builder.entry_count(), 10u);
  const std::string node(builder.Finish(0));
  LeafNodeView view;
  ASSERT_TRUE(LeafNodeView::Parse(node, &view).ok());
  EXPECT_EQ(view.entry_count(), builder.entry_count());
}

TEST(LeafNodeTest, ParseRejectsIndexNodes) {
  IndexNodeBuilder builder;
  builder.Reset(1);
  builder.AddFirstChild(alloc::DeviceOffset(1, 0));
  const std::string node(builder.Finish());
  ASSERT_TRUE(ValidateNode(node).ok());
  LeafNodeView view;
  const Status status = LeafNodeView::Parse(node, &view);
  EXPECT_TRUE(status.IsCorruption());
  EXPECT_NE(status.message().find("expected a leaf"), std::string_view::npos);
}

TEST(LeafNodeDeathTest, KeysOutOfOrderAreABug) {
  LeafNodeBuilder builder;
  builder.Add("b", LeafValue::Tombstone());
  EXPECT_DEATH(builder.Add("a", LeafValue::Tombstone()), "increase");
  EXPECT_DEATH(builder.Add("b", LeafValue::Tombstone()), "increase");
}

}  // namespace
}  // namespace kvs::btree
