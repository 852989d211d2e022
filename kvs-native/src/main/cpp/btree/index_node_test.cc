#include "btree/index_node.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "alloc/device_offset.h"
#include "btree/leaf_node.h"
#include "testing/random_keys.h"

namespace kvs::btree {
namespace {

namespace format = node_format;

uint64_t Child(uint64_t i) {
  return alloc::DeviceOffset(3 + i / 128, (i % 128) * 16384);
}

TEST(IndexNodeTest, ShortestSeparatorExamples) {
  EXPECT_EQ(ShortestSeparator("abc", "abd"), "abd");
  EXPECT_EQ(ShortestSeparator("abc", "b"), "b");
  EXPECT_EQ(ShortestSeparator("abc", "bcd"), "b");
  EXPECT_EQ(ShortestSeparator("ab", "abc"), "abc");
  EXPECT_EQ(ShortestSeparator("", std::string_view("\x00", 1)),
            std::string_view("\x00", 1));
  EXPECT_EQ(ShortestSeparator("a\xff\xff", "b"), "b");
  EXPECT_EQ(ShortestSeparator(std::string_view("\x00\x00", 2),
                              std::string_view("\x00\x01\x05", 3)),
            std::string_view("\x00\x01", 2));
}

// For random neighbours: left < s <= right, s is a prefix of right, and no
// shorter prefix of right separates them (so no shorter string at all does:
// any s' that is not a prefix of left and is <= right differs from left
// before right does).
TEST(IndexNodeTest, ShortestSeparatorSeparatesAndIsShortest) {
  testing::RandomBytes random(11);
  for (int i = 0; i < 20000; ++i) {
    std::string left = random.Key(0, 6);
    std::string right = random.Key(0, 6);
    if (i % 4 == 0) {
      right = left + random.Key(1, 3);  // left is a prefix of right
    }
    if (left == right) {
      continue;
    }
    if (right < left) {
      std::swap(left, right);
    }
    const std::string_view separator = ShortestSeparator(left, right);
    ASSERT_LT(std::string_view(left), separator);
    ASSERT_LE(separator, std::string_view(right));
    ASSERT_EQ(right.substr(0, separator.size()), separator);
    ASSERT_LE(right.substr(0, separator.size() - 1), left);
  }
}

TEST(IndexNodeTest, RoutesKeysToTheChildCoveringThem) {
  IndexNodeBuilder builder;
  builder.Reset(1);
  builder.AddFirstChild(Child(0));
  builder.AddChild("b", Child(1));
  builder.AddChild(std::string_view("b\x00", 2), Child(2));
  builder.AddChild("d", Child(3));
  const std::string node(builder.Finish());
  IndexNodeView view;
  ASSERT_TRUE(IndexNodeView::Parse(node, &view).ok());
  EXPECT_EQ(view.level(), 1);
  EXPECT_EQ(view.ChildSizeBytes(), format::leaf_node_size_bytes);
  ASSERT_EQ(view.pivot_count(), 3u);
  ASSERT_EQ(view.child_count(), 4u);
  EXPECT_EQ(view.pivot(1), std::string_view("b\x00", 2));
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(view.child_offset(i), Child(i));
  }
  EXPECT_EQ(view.ChildIndexFor(""), 0u);
  EXPECT_EQ(view.ChildIndexFor("a\xff"), 0u);
  EXPECT_EQ(view.ChildIndexFor("b"), 1u);  // a pivot belongs to the right
  EXPECT_EQ(view.ChildIndexFor(std::string_view("b\x00", 2)), 2u);
  EXPECT_EQ(view.ChildIndexFor("b\x01"), 2u);
  EXPECT_EQ(view.ChildIndexFor("czz"), 2u);
  EXPECT_EQ(view.ChildIndexFor("d"), 3u);
  EXPECT_EQ(view.ChildIndexFor("\xff\xff"), 3u);
}

TEST(IndexNodeTest, OneChildAndNoPivotIsValid) {
  IndexNodeBuilder builder;
  builder.Reset(3);
  builder.AddFirstChild(Child(9));
  const std::string node(builder.Finish());
  IndexNodeView view;
  ASSERT_TRUE(IndexNodeView::Parse(node, &view).ok());
  EXPECT_EQ(view.level(), 3);
  EXPECT_EQ(view.ChildSizeBytes(), format::index_node_size_bytes);
  EXPECT_EQ(view.pivot_count(), 0u);
  EXPECT_EQ(view.ChildIndexFor("anything"), 0u);
  EXPECT_EQ(view.child_offset(0), Child(9));
}

TEST(IndexNodeTest, ThreeMaximumSizePivotsFitAndAFourthDoesNot) {
  IndexNodeBuilder builder;
  builder.Reset(1);
  builder.AddFirstChild(Child(0));
  std::vector<std::string> pivots;
  for (char last = 'a'; last <= 'd'; ++last) {
    pivots.push_back(std::string(limits::key_size_bytes_max - 1, 'p') + last);
  }
  for (size_t i = 0; i < index_format::full_node_pivot_count_min; ++i) {
    ASSERT_TRUE(builder.Fits(pivots[i]));
    builder.AddChild(pivots[i], Child(i + 1));
  }
  EXPECT_FALSE(builder.Fits(pivots[3]));
  EXPECT_TRUE(builder.Fits("short"));
  const std::string node(builder.Finish());
  IndexNodeView view;
  ASSERT_TRUE(IndexNodeView::Parse(node, &view).ok());
  EXPECT_EQ(view.pivot(2), pivots[2]);
  EXPECT_EQ(view.ChildIndexFor(pivots[1]), 2u);
  EXPECT_EQ(view.ChildIndexFor(pivots[3]), 3u);
}

TEST(IndexNodeTest, ParseRejectsLeaves) {
  LeafNodeBuilder builder;
  builder.Add("key", LeafValue::Tombstone());
  const std::string node(builder.Finish(0));
  ASSERT_TRUE(ValidateNode(node).ok());
  IndexNodeView view;
  const Status status = IndexNodeView::Parse(node, &view);
  EXPECT_TRUE(status.IsCorruption());
  EXPECT_NE(status.message().find("expected an index node"),
            std::string_view::npos);
}

TEST(IndexNodeDeathTest, PivotsOutOfOrderAreABug) {
  IndexNodeBuilder builder;
  builder.Reset(1);
  builder.AddFirstChild(Child(0));
  builder.AddChild("m", Child(1));
  EXPECT_DEATH(builder.AddChild("m", Child(2)), "increase");
  EXPECT_DEATH(builder.AddChild("", Child(2)), "pivot");
}

}  // namespace
}  // namespace kvs::btree
