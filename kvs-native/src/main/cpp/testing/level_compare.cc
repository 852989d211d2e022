#include "testing/level_compare.h"

#include <algorithm>
#include <memory>
#include <string>

#include "alloc/device_offset.h"
#include "btree/tree_reader.h"

namespace kvs::testing {
namespace {

Status Read(io::File* file, uint64_t offset, size_t size, std::string* bytes) {
  bytes->assign(size, '\0');
  return file->Read(offset, size, bytes->data());
}

std::string Where(uint64_t offset) {
  return std::to_string(alloc::SegmentOf(offset)) + "+" +
         std::to_string(alloc::OffsetInSegment(offset));
}

}  // namespace

Status CompareLevels(io::File* primary_file, lsm::NodeCache* primary_nodes,
                     const lsm::LevelDescriptor& primary, io::File* backup_file,
                     const lsm::LevelDescriptor& backup,
                     LevelComparison* counts) {
  std::shared_ptr<lsm::Level> ours, theirs;
  KVS_RETURN_IF_ERROR(
      lsm::Level::Open(primary_file, primary_nodes, primary, &ours));
  lsm::NodeCache backup_nodes(backup_file, 8 << 20);
  KVS_RETURN_IF_ERROR(
      lsm::Level::Open(backup_file, &backup_nodes, backup, &theirs));
  btree::TreeReader::Iterator a(&ours->tree()), b(&theirs->tree());
  a.SeekToFirst();
  b.SeekToFirst();
  uint64_t entries = 0;
  for (; a.Valid(); a.Next(), b.Next()) {
    const auto differ = [&](const std::string& what) {
      return Status::Corruption("entry " + std::to_string(entries) + " (key " +
                                std::string(a.key()) + "): " + what);
    };
    if (!b.Valid()) {
      return differ("the backup's level ends here: " + b.status().ToString());
    }
    if (a.key() != b.key()) {
      return differ("the backup has key " + std::string(b.key()));
    }
    const btree::LeafValue x = a.value(), y = b.value();
    if (x.kind != y.kind) return differ("another kind");
    if (!theirs->MayContain(b.key())) return differ("not in the filter");
    if (x.kind == btree::EntryKind::kPutInline) {
      if (x.inline_bytes != y.inline_bytes) return differ("another value");
    } else if (x.kind == btree::EntryKind::kPutInLog) {
      if (x.log_record_size_bytes != y.log_record_size_bytes) {
        return differ("another value record size");
      }
      // Segment numbers may coincide now and then (both volumes reuse
      // freed segments); the bytes behind them must always match.
      counts->moved_pointers += x.log_offset != y.log_offset ? 1 : 0;
      std::string ours_bytes, theirs_bytes;
      KVS_RETURN_IF_ERROR(Read(primary_file, x.log_offset,
                               x.log_record_size_bytes, &ours_bytes));
      KVS_RETURN_IF_ERROR(Read(backup_file, y.log_offset,
                               y.log_record_size_bytes, &theirs_bytes));
      const auto& medium = primary.medium_segments;
      const bool in_medium =
          std::find(medium.begin(), medium.end(),
                    alloc::SegmentOf(x.log_offset)) != medium.end();
      if (ours_bytes != theirs_bytes) {
        return differ("another value record at " + Where(y.log_offset) +
                      " (the primary's " + Where(x.log_offset) + ", " +
                      (in_medium ? "medium" : "large") + " log)");
      }
      ++counts->in_log;
      counts->medium_values += in_medium ? 1 : 0;
    }
    ++entries;
  }
  KVS_RETURN_IF_ERROR(a.status());
  KVS_RETURN_IF_ERROR(b.status());
  if (b.Valid()) {
    return Status::Corruption("the backup's level has more entries");
  }
  if (entries != primary.entries) {
    return Status::Corruption("the primary's level has " +
                              std::to_string(entries) + " entries, not " +
                              std::to_string(primary.entries));
  }
  counts->entries += entries;
  return Status::Ok();
}

}  // namespace kvs::testing
