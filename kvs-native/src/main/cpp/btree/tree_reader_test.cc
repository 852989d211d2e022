#include "btree/tree_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "alloc/device_offset.h"
#include "btree/index_node.h"
#include "testing/memory_node_store.h"
#include "testing/random_keys.h"
#include "testing/tree_entries.h"
#include "util/coding.h"

namespace kvs::btree {
namespace {

namespace format = node_format;
using testing::MemoryNodeStore;
using testing::TreeEntries;
using testing::TreeValue;

// A store holding the tree of `entries`, and a reader on it.
struct Tree {
  explicit Tree(const TreeEntries& tree_entries) {
    EXPECT_TRUE(testing::BuildTree(tree_entries, &store, &root, &stats).ok());
    reader = std::make_unique<TreeReader>(&store, root);
  }
  MemoryNodeStore store;
  uint64_t root = 0;
  BuildStats stats;
  std::unique_ptr<TreeReader> reader;
};

// Looks `key` up and checks the answer against `entries`.
void ExpectGetMatches(const TreeReader& reader, const TreeEntries& entries,
                      const std::string& key) {
  std::string leaf_buffer;
  LeafValue value;
  bool found = true;
  ASSERT_TRUE(reader.Get(key, &leaf_buffer, &value, &found).ok());
  const auto expected = entries.find(key);
  ASSERT_EQ(found, expected != entries.end()) << ::testing::PrintToString(key);
  if (found) {
    EXPECT_EQ(value, expected->second.view());
  }
}

// Scans from Seek(target) (or the first entry) to the end and checks every
// entry against `entries` from the first key >= target.
void ExpectScanMatches(const TreeReader& reader, const TreeEntries& entries,
                       const std::string* target) {
  TreeReader::Iterator iterator(&reader);
  auto expected = entries.begin();
  if (target != nullptr) {
    iterator.Seek(*target);
    expected = entries.lower_bound(*target);
  } else {
    iterator.SeekToFirst();
  }
  for (; expected != entries.end(); ++expected, iterator.Next()) {
    ASSERT_TRUE(iterator.Valid());
    ASSERT_EQ(iterator.key(), expected->first);
    ASSERT_EQ(iterator.value(), expected->second.view());
  }
  EXPECT_FALSE(iterator.Valid());
  EXPECT_TRUE(iterator.status().ok()) << iterator.status().ToString();
}

TEST(TreeReaderTest, EmptyTreeHasNoEntries) {
  MemoryNodeStore store;
  TreeReader reader(&store, 0);
  std::string leaf_buffer;
  LeafValue value;
  bool found = true;
  ASSERT_TRUE(reader.Get("a", &leaf_buffer, &value, &found).ok());
  EXPECT_FALSE(found);
  TreeReader::Iterator iterator(&reader);
  iterator.SeekToFirst();
  EXPECT_FALSE(iterator.Valid());
  EXPECT_TRUE(iterator.status().ok());
  EXPECT_EQ(store.read_count(), 0u);
}

TEST(TreeReaderTest, EveryKindAndAwkwardKeyRoundTrips) {
  TreeEntries entries;
  entries[""] = TreeValue::From(LeafValue::Inline("empty key"));
  entries[std::string("\x00", 1)] = TreeValue::From(LeafValue::Tombstone());
  entries[std::string("\x00\xff", 2)] =
      TreeValue::From(LeafValue::InLog(alloc::DeviceOffset(99, 12), 4000));
  entries["pre"] = TreeValue::From(LeafValue::Inline(std::string(4055, 'x')));
  entries["pref"] = TreeValue::From(LeafValue::Tombstone());
  entries["prefix"] =
      TreeValue::From(LeafValue::Inline(std::string(4055, 'y')));
  entries["\xff"] = TreeValue::From(LeafValue::InLog(1, 1));
  Tree tree(entries);
  ASSERT_GE(tree.stats.leaf_count, 2u);  // two 4055-byte values need two
  for (const auto& [key, value] : entries) {
    ExpectGetMatches(*tree.reader, entries, key);
    ExpectGetMatches(*tree.reader, entries, key + '\0');
  }
  ExpectGetMatches(*tree.reader, entries, "pr");
  ExpectGetMatches(*tree.reader, entries, "\xff\xff");
  ExpectScanMatches(*tree.reader, entries, nullptr);
}

TEST(TreeReaderTest, OneEntryTree) {
  TreeEntries entries;
  entries["k"] = TreeValue::From(LeafValue::Inline("v"));
  Tree tree(entries);
  ASSERT_EQ(tree.stats.height, 1u);
  for (const char* key : {"", "k", "j", "k\x01", "l"}) {
    ExpectGetMatches(*tree.reader, entries, key);
    const std::string target(key);
    ExpectScanMatches(*tree.reader, entries, &target);
  }
}

// Every key is found with its value; keys next to every key are not.
TEST(TreeReaderTest, GetMatchesAMapForHitsAndMisses) {
  testing::TreeEntriesOptions options;
  options.count = 3000;
  options.inline_value_size_max = 100;
  const TreeEntries entries = testing::RandomTreeEntries(5, options);
  Tree tree(entries);
  ASSERT_GE(tree.stats.height, 2u);
  for (const auto& [key, value] : entries) {
    ExpectGetMatches(*tree.reader, entries, key);
    ExpectGetMatches(*tree.reader, entries, key + '\0');
    if (!key.empty()) {
      ExpectGetMatches(*tree.reader, entries, key.substr(0, key.size() - 1));
    }
  }
  testing::RandomBytes random(6);
  for (int i = 0; i < 500; ++i) {
    ExpectGetMatches(*tree.reader, entries, random.Key(0, 24));
  }
}

TEST(TreeReaderTest, SeekAtBetweenBeforeAndAfterKeys) {
  testing::TreeEntriesOptions options;
  options.count = 2000;
  options.key_size_min = 1;
  const TreeEntries entries = testing::RandomTreeEntries(8, options);
  Tree tree(entries);
  ASSERT_GE(tree.stats.leaf_count, 3u);
  ExpectScanMatches(*tree.reader, entries, nullptr);
  const std::string before_all;
  ExpectScanMatches(*tree.reader, entries, &before_all);
  const std::string after_all = entries.rbegin()->first + '\0';
  ExpectScanMatches(*tree.reader, entries, &after_all);
  // Seeking at and just after every 50th key, checking the next few keys.
  size_t i = 0;
  for (auto entry = entries.begin(); entry != entries.end(); ++entry, ++i) {
    if (i % 50 != 0) {
      continue;
    }
    for (const std::string& target : {entry->first, entry->first + '\0'}) {
      TreeReader::Iterator iterator(tree.reader.get());
      iterator.Seek(target);
      auto expected = entries.lower_bound(target);
      for (int step = 0; step < 5 && expected != entries.end();
           ++step, ++expected, iterator.Next()) {
        ASSERT_TRUE(iterator.Valid());
        EXPECT_EQ(iterator.key(), expected->first);
      }
    }
  }
}

// Keys with a long shared prefix, as in real data sets, so that separators
// are long and a few ten thousand entries need three levels.
TreeEntries PrefixedEntries(size_t count) {
  TreeEntries entries;
  testing::RandomBytes random(13);
  for (size_t i = 0; i < count; ++i) {
    char key[64];
    std::snprintf(key, sizeof(key), "tenant-17/object/%014zu", i * 3);
    entries[key] = TreeValue::From(
        i % 4 == 0 ? LeafValue::Tombstone()
                   : LeafValue::InLog(alloc::DeviceOffset(600 + i % 7, i), 77));
    if (i % 4 == 1) {
      entries[key] = TreeValue{EntryKind::kPutInline, random.Bytes(100), 0, 0};
    }
  }
  return entries;
}

TEST(TreeReaderTest, HundredThousandEntries) {
  const TreeEntries entries = PrefixedEntries(100000);
  Tree tree(entries);
  EXPECT_GE(tree.stats.height, 3u);
  ExpectScanMatches(*tree.reader, entries, nullptr);
  size_t i = 0;
  for (auto entry = entries.begin(); entry != entries.end(); ++entry, ++i) {
    if (i % 97 == 0) {
      ExpectGetMatches(*tree.reader, entries, entry->first);
      ExpectGetMatches(*tree.reader, entries, entry->first + '\0');
    }
  }
}

// The fraction of `entries` in [lower, upper) (`upper` null: unbounded).
double ExactFraction(const TreeEntries& entries, const std::string& lower,
                     const std::string* upper) {
  const auto first = entries.lower_bound(lower);
  const auto last =
      upper == nullptr ? entries.end() : entries.lower_bound(*upper);
  const auto inside = std::distance(first, last);
  return inside <= 0 ? 0.0 : static_cast<double>(inside) / entries.size();
}

TEST(TreeReaderTest, EstimatesTheFractionOfEntriesWithinBounds) {
  double fraction = 1;
  MemoryNodeStore empty_store;
  ASSERT_TRUE(TreeReader(&empty_store, 0)
                  .EstimateFraction("", nullptr, &fraction)
                  .ok());
  EXPECT_EQ(fraction, 0.0);

  const TreeEntries small = PrefixedEntries(20);  // a leaf root: exact
  Tree leaf_tree(small);
  ASSERT_EQ(leaf_tree.stats.height, 1u);
  const std::string fifth = std::next(small.begin(), 5)->first;
  ASSERT_TRUE(
      leaf_tree.reader->EstimateFraction(fifth, nullptr, &fraction).ok());
  EXPECT_DOUBLE_EQ(fraction, 0.75);

  const TreeEntries entries = PrefixedEntries(100000);
  Tree tree(entries);
  ASSERT_GE(tree.stats.height, 3u);
  const auto key_at = [&entries](double at) {
    return std::next(entries.begin(),
                     static_cast<long>(at * (entries.size() - 1)))
        ->first;
  };
  const std::string none;
  const std::string after_all = "tenant-18";
  const std::string quarter = key_at(0.25), half = key_at(0.5),
                    third = key_at(0.33), ninety = key_at(0.9);
  const struct {
    std::string lower;
    const std::string* upper;
  } cases[] = {{none, nullptr},      {half, nullptr}, {none, &half},
               {quarter, &ninety},   {third, &half},  {half, &half},
               {after_all, nullptr}, {none, &none},   {ninety, &after_all}};
  for (const auto& bounds : cases) {
    const size_t reads_before = tree.store.read_count();
    ASSERT_TRUE(
        tree.reader->EstimateFraction(bounds.lower, bounds.upper, &fraction)
            .ok());
    const double exact = ExactFraction(entries, bounds.lower, bounds.upper);
    EXPECT_NEAR(fraction, exact, 0.02)
        << bounds.lower << " .. " << (bounds.upper ? *bounds.upper : "end");
    // The root (twice: its type, then the node), and at most three nodes
    // per level below it (one per bound, one for the fill of the last).
    EXPECT_LE(tree.store.read_count() - reads_before,
              2 + 3 * (tree.stats.height - 1))
        << "height " << tree.stats.height << " " << bounds.lower;
  }
}

TEST(TreeReaderTest, FindsTheKeyAtAFractionOfTheEntriesWithinBounds) {
  std::string key;
  bool found = true;
  MemoryNodeStore empty_store;
  ASSERT_TRUE(TreeReader(&empty_store, 0)
                  .KeyAtFraction("", nullptr, 0.5, &key, &found)
                  .ok());
  EXPECT_FALSE(found);

  const TreeEntries small = PrefixedEntries(20);  // a leaf root
  Tree leaf_tree(small);
  ASSERT_TRUE(
      leaf_tree.reader->KeyAtFraction("", nullptr, 0.5, &key, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(key, std::next(small.begin(), 10)->first);

  const TreeEntries entries = PrefixedEntries(100000);
  Tree tree(entries);
  ASSERT_GE(tree.stats.height, 3u);
  const auto key_at = [&entries](double at) {
    return std::next(entries.begin(),
                     static_cast<long>(at * (entries.size() - 1)))
        ->first;
  };
  const std::string none;
  const std::string quarter = key_at(0.25), ninety = key_at(0.9);
  const struct {
    std::string lower;
    const std::string* upper;
    double fraction;
  } cases[] = {{none, nullptr, 0.5},
               {quarter, &ninety, 0.5},
               {quarter, nullptr, 0.5},
               {none, &quarter, 0.3},
               {quarter, &ninety, 0.9}};
  for (const auto& c : cases) {
    const size_t reads_before = tree.store.read_count();
    ASSERT_TRUE(
        tree.reader->KeyAtFraction(c.lower, c.upper, c.fraction, &key, &found)
            .ok());
    ASSERT_TRUE(found) << c.lower;
    // A key of the tree, strictly inside the bounds (a split point).
    EXPECT_EQ(entries.count(key), 1u) << key;
    EXPECT_GT(key, c.lower);
    if (c.upper != nullptr) {
      EXPECT_LT(key, *c.upper);
    }
    // Within 2 % of the exact share of the range's entries below it.
    const double range = ExactFraction(entries, c.lower, c.upper);
    const double below = ExactFraction(entries, c.lower, &key) / range;
    EXPECT_NEAR(below, c.fraction, 0.02)
        << c.lower << " .. " << (c.upper ? *c.upper : "end");
    // A few dozen estimates, not a scan: far fewer reads than the ~400
    // leaves of the range.
    EXPECT_LE(tree.store.read_count() - reads_before, 600u);
  }

  // A range holding no key: nothing found.
  const std::string after_all = "tenant-18";
  ASSERT_TRUE(
      tree.reader->KeyAtFraction(after_all, nullptr, 0.5, &key, &found).ok());
  EXPECT_FALSE(found);
}

// Scans backward from SeekForPrev(target) (or the last entry) to the start
// and checks every entry against `entries` from the last key <= target.
void ExpectReverseScanMatches(const TreeReader& reader,
                              const TreeEntries& entries,
                              const std::string* target) {
  TreeReader::Iterator iterator(&reader);
  auto expected = entries.rbegin();
  if (target != nullptr) {
    iterator.SeekForPrev(*target);
    expected =
        TreeEntries::const_reverse_iterator(entries.upper_bound(*target));
  } else {
    iterator.SeekToLast();
  }
  for (; expected != entries.rend(); ++expected, iterator.Prev()) {
    ASSERT_TRUE(iterator.Valid());
    ASSERT_EQ(iterator.key(), expected->first);
    ASSERT_EQ(iterator.value(), expected->second.view());
  }
  EXPECT_FALSE(iterator.Valid());
  EXPECT_TRUE(iterator.status().ok()) << iterator.status().ToString();
}

TEST(TreeReaderTest, ReverseScansVisitEveryEntryBackward) {
  for (const size_t count : {size_t{1}, size_t{2000}, size_t{60000}}) {
    const TreeEntries entries = count == 60000 ? PrefixedEntries(count) : [&] {
      testing::TreeEntriesOptions options;
      options.count = count;
      options.key_size_min = 1;
      return testing::RandomTreeEntries(9, options);
    }();
    Tree tree(entries);
    ExpectReverseScanMatches(*tree.reader, entries, nullptr);
    const std::string after_all = entries.rbegin()->first + '\0';
    ExpectReverseScanMatches(*tree.reader, entries, &after_all);
    const std::string before_all;
    TreeReader::Iterator none(tree.reader.get());
    none.SeekForPrev(before_all);
    EXPECT_EQ(none.Valid(), entries.begin()->first.empty());
    // At, just after and just before every 97th key, a few steps back, and
    // turning forward again.
    size_t i = 0;
    for (auto entry = entries.begin(); entry != entries.end(); ++entry, ++i) {
      if (i % 97 != 0) continue;
      std::string just_before = entry->first;
      if (!just_before.empty() && just_before.back() != '\0') {
        just_before.back() = static_cast<char>(just_before.back() - 1);
      }
      for (const std::string& target :
           {entry->first, entry->first + '\0', just_before}) {
        TreeReader::Iterator iterator(tree.reader.get());
        iterator.SeekForPrev(target);
        auto expected =
            TreeEntries::const_reverse_iterator(entries.upper_bound(target));
        for (int step = 0; step < 5 && expected != entries.rend();
             ++step, ++expected, iterator.Prev()) {
          ASSERT_TRUE(iterator.Valid()) << step;
          ASSERT_EQ(iterator.key(), expected->first);
        }
        if (expected == entries.rend()) {
          EXPECT_FALSE(iterator.Valid());
        }
      }
    }
  }
}

TEST(TreeReaderTest, MaximumSizeKeysInLeavesAndPivots) {
  TreeEntries entries;
  for (size_t i = 0; i < 200; ++i) {
    std::string key(limits::key_size_bytes_max,
                    static_cast<char>(i % 2 ? 0 : 0xff));
    key[0] = static_cast<char>(i);  // keys differ first at byte 0 or last
    key.back() = static_cast<char>(i);
    entries[key] = TreeValue::From(LeafValue::Tombstone());
    key.back() ^= 1;
    entries[key] = TreeValue::From(LeafValue::InLog(4096, 10));
  }
  Tree tree(entries);
  ASSERT_GE(tree.stats.height, 4u);
  for (const auto& [key, value] : entries) {
    ExpectGetMatches(*tree.reader, entries, key);
    ExpectGetMatches(*tree.reader, entries, key.substr(0, 4095));
  }
  ExpectScanMatches(*tree.reader, entries, nullptr);
  const std::string middle = std::next(entries.begin(), 150)->first + '\0';
  ExpectScanMatches(*tree.reader, entries, &middle);
  ExpectReverseScanMatches(*tree.reader, entries, nullptr);
  ExpectReverseScanMatches(*tree.reader, entries, &middle);
}

// The root's size is learnt once: the first lookup in a tree with an index
// root reads one extra leaf-sized block, later lookups do not.
TEST(TreeReaderTest, ReadsOneNodePerLevel) {
  const TreeEntries entries = testing::RandomTreeEntries(3, {});
  Tree tree(entries);
  ASSERT_EQ(tree.stats.height, 2u);
  for (uint64_t extra : {1, 0, 0}) {
    const uint64_t before = tree.store.read_count();
    ExpectGetMatches(*tree.reader, entries, entries.begin()->first);
    EXPECT_EQ(tree.store.read_count() - before, tree.stats.height + extra);
  }
}

// Changes the node at `offset` with `change` and reseals it, as a bug
// writing well-formed but wrong nodes would.
template <typename Change>
void RewriteNode(MemoryNodeStore* store, uint64_t offset, size_t size,
                 Change change) {
  char* node = store->MutableBytes(offset);
  change(node);
  SealNode(node, size);
}

std::vector<uint64_t> WrittenOffsets(const MemoryNodeStore& store,
                                     size_t size) {
  std::vector<uint64_t> offsets;
  for (const auto& node : store.written()) {
    if (node.size == size) {
      offsets.push_back(node.offset);
    }
  }
  return offsets;
}

TEST(TreeReaderTest, ACorruptedLeafGivesCorruptionNotAnAnswer) {
  const TreeEntries entries = testing::RandomTreeEntries(4, {});
  Tree tree(entries);
  const std::vector<uint64_t> leaves =
      WrittenOffsets(tree.store, format::leaf_node_size_bytes);
  ASSERT_GE(leaves.size(), 3u);
  std::string bytes;
  ASSERT_TRUE(
      tree.store.Read(leaves[1], format::leaf_node_size_bytes, &bytes).ok());
  LeafNodeView leaf;
  ASSERT_TRUE(LeafNodeView::Parse(bytes, &leaf).ok());
  const std::string key_in_leaf(leaf.key(0));
  tree.store.MutableBytes(leaves[1])[200] ^= 0x10;

  std::string leaf_buffer;
  LeafValue value;
  bool found = false;
  EXPECT_TRUE(tree.reader->Get(key_in_leaf, &leaf_buffer, &value, &found)
                  .IsCorruption());
  // Other leaves still answer.
  ExpectGetMatches(*tree.reader, entries, entries.begin()->first);
  TreeReader::Iterator iterator(tree.reader.get());
  iterator.SeekToFirst();
  while (iterator.Valid()) {
    iterator.Next();
  }
  EXPECT_TRUE(iterator.status().IsCorruption());
  iterator.Seek(key_in_leaf);
  EXPECT_FALSE(iterator.Valid());
  EXPECT_TRUE(iterator.status().IsCorruption());
}

// A well-formed node in the wrong place (swapped children, a cycle, a
// backwards chain) is caught by the checks across nodes.
TEST(TreeReaderTest, MisplacedNodesGiveCorruption) {
  const TreeEntries entries = PrefixedEntries(60000);
  const std::string first_key = entries.begin()->first;
  std::string leaf_buffer;
  LeafValue value;
  bool found = false;
  {  // The first level-1 node's children 0 and 1 swapped.
    Tree tree(entries);
    ASSERT_GE(tree.stats.height, 3u);
    const uint64_t node =
        WrittenOffsets(tree.store, format::index_node_size_bytes)[0];
    RewriteNode(&tree.store, node, format::index_node_size_bytes,
                [](char* bytes) {
                  char* pointers = bytes + format::pointer_array_offset;
                  std::swap_ranges(pointers, pointers + 8, pointers + 8);
                });
    EXPECT_TRUE(tree.reader->Get(first_key, &leaf_buffer, &value, &found)
                    .IsCorruption());
  }
  {  // The root's first child pointing back at the root.
    Tree tree(entries);
    RewriteNode(&tree.store, tree.root, format::index_node_size_bytes,
                [&](char* bytes) {
                  coding::EncodeFixed64(bytes + format::pointer_array_offset,
                                        tree.root);
                });
    const Status status =
        tree.reader->Get(first_key, &leaf_buffer, &value, &found);
    EXPECT_TRUE(status.IsCorruption());
    EXPECT_NE(status.message().find("level"), std::string_view::npos);
  }
  {  // The second leaf's next-leaf pointer going back to the first leaf.
    Tree tree(entries);
    const std::vector<uint64_t> leaves =
        WrittenOffsets(tree.store, format::leaf_node_size_bytes);
    RewriteNode(
        &tree.store, leaves[1], format::leaf_node_size_bytes, [&](char* bytes) {
          coding::EncodeFixed64(bytes + format::next_leaf_offset, leaves[0]);
        });
    TreeReader::Iterator iterator(tree.reader.get());
    size_t steps = 0;
    for (iterator.SeekToFirst(); iterator.Valid(); iterator.Next()) {
      ASSERT_LT(++steps, entries.size());
    }
    EXPECT_TRUE(iterator.status().IsCorruption());
  }
}

TEST(TreeReaderTest, ReadErrorsAreReturned) {
  MemoryNodeStore store;
  // Nothing stored at all: the source fails.
  TreeReader missing(&store, alloc::DeviceOffset(70, 0));
  std::string leaf_buffer;
  LeafValue value;
  bool found = false;
  EXPECT_EQ(missing.Get("a", &leaf_buffer, &value, &found).code(),
            Status::Code::kIoError);
  // Zeros where a node should be: not a node.
  store.Put(alloc::DeviceOffset(71, 0), std::string(8192, '\0'));
  TreeReader zeros(&store, alloc::DeviceOffset(71, 0));
  EXPECT_TRUE(zeros.Get("a", &leaf_buffer, &value, &found).IsCorruption());
  TreeReader::Iterator iterator(&zeros);
  iterator.Seek("a");
  EXPECT_FALSE(iterator.Valid());
  EXPECT_TRUE(iterator.status().IsCorruption());
}

}  // namespace
}  // namespace kvs::btree
