#include "testing/level_compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "alloc/device_offset.h"
#include "btree/tree_reader.h"

namespace kvs::testing {
namespace {

std::string Read(io::File* file, uint64_t offset, size_t size) {
  std::string bytes(size, '\0');
  EXPECT_TRUE(file->Read(offset, size, bytes.data()).ok());
  return bytes;
}

}  // namespace

void ExpectSameLevel(io::File* primary_file, lsm::NodeCache* primary_nodes,
                     const lsm::LevelDescriptor& primary, io::File* backup_file,
                     const lsm::LevelDescriptor& backup,
                     LevelComparison* counts) {
  std::shared_ptr<lsm::Level> ours, theirs;
  ASSERT_TRUE(
      lsm::Level::Open(primary_file, primary_nodes, primary, &ours).ok());
  lsm::NodeCache backup_nodes(backup_file, 8 << 20);
  const Status opened =
      lsm::Level::Open(backup_file, &backup_nodes, backup, &theirs);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  btree::TreeReader::Iterator a(&ours->tree()), b(&theirs->tree());
  a.SeekToFirst();
  b.SeekToFirst();
  uint64_t entries = 0;
  for (; a.Valid(); a.Next(), b.Next()) {
    ASSERT_TRUE(b.Valid()) << b.status().ToString();
    ASSERT_EQ(a.key(), b.key());
    const btree::LeafValue x = a.value(), y = b.value();
    ASSERT_EQ(x.kind, y.kind);
    EXPECT_TRUE(theirs->MayContain(b.key()));
    if (x.kind == btree::EntryKind::kPutInline) {
      ASSERT_EQ(x.inline_bytes, y.inline_bytes);
    } else if (x.kind == btree::EntryKind::kPutInLog) {
      ASSERT_EQ(x.log_record_size_bytes, y.log_record_size_bytes);
      // Segment numbers may coincide now and then (both volumes reuse
      // freed segments); the bytes behind them must always match.
      counts->moved_pointers += x.log_offset != y.log_offset ? 1 : 0;
      ASSERT_EQ(Read(primary_file, x.log_offset, x.log_record_size_bytes),
                Read(backup_file, y.log_offset, y.log_record_size_bytes));
      ++counts->in_log;
      const auto& medium = primary.medium_segments;
      if (std::find(medium.begin(), medium.end(),
                    alloc::SegmentOf(x.log_offset)) != medium.end()) {
        ++counts->medium_values;
      }
    }
    ++entries;
  }
  ASSERT_TRUE(a.status().ok()) << a.status().ToString();
  EXPECT_FALSE(b.Valid());
  EXPECT_TRUE(b.status().ok()) << b.status().ToString();
  EXPECT_EQ(entries, primary.entries);
  counts->entries += entries;
}

}  // namespace kvs::testing
