// Value-log shipping end to end in one process: a primary region's log
// appends (RegionContext::on_log_append), mirrored as a backup receives
// them -- bytes at their offsets in a segment-sized buffer, persisted into
// a LogMirror when the next segment starts and, for the tails, at the end
// -- replay from the backup's copies to exactly the primary's logs.

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "log/log_reader.h"
#include "lsm/region.h"
#include "replication/log_mirror.h"
#include "testing/memory_device.h"
#include "testing/random_keys.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

constexpr uint64_t kSegment = limits::segment_size_bytes;

struct Replayed {
  uint64_t lsn;
  log::RecordType type;
  std::string key;
  std::string value;
  bool operator==(const Replayed&) const = default;
};

std::vector<Replayed> Replay(io::File* file, uint64_t region_id,
                             log::LogKind kind,
                             const std::map<uint64_t, uint64_t>& segments) {
  std::vector<Replayed> records;
  const log::LogIdentity identity{region_id, kind, "", {}, {}, {}, {}};
  log::LogTail tail;
  const Status status = log::ReplayLog(
      file, identity, segments,
      [&](const log::Record& record, uint64_t, uint32_t) {
        records.push_back({record.lsn, record.type, std::string(record.key),
                           std::string(record.value)});
        return Status::Ok();
      },
      &tail);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return records;
}

// What a backup holds of one log: the segment being filled.
struct Filling {
  bool active = false;
  uint64_t segment = 0;
  uint64_t chain_index = 0;
  std::string bytes;
  size_t end = 0;
};

TEST(LogShippingTest, MirroredLogsReplayToExactlyThePrimarysLogs) {
  // The primary.
  auto device = testing::MemoryDevice::Create(128 * kSegment);
  std::unique_ptr<alloc::Volume> volume;
  ASSERT_TRUE(alloc::Volume::Create(device->Open(), {}, &volume).ok());
  io::SyncGroup sync_group(volume->file());
  lsm::NodeCache nodes(volume->file(), 8 << 20);
  lsm::RecordReader records(volume->file());
  ThreadPool pool(1);
  // The backup.
  auto backup_device = testing::MemoryDevice::Create(128 * kSegment);
  std::unique_ptr<alloc::Volume> backup;
  ASSERT_TRUE(alloc::Volume::Create(backup_device->Open(), {}, &backup).ok());
  std::unique_ptr<LogMirror> mirrors[2];
  ASSERT_TRUE(
      LogMirror::Open(backup.get(), 1, log::LogKind::kSmall, &mirrors[0]).ok());
  ASSERT_TRUE(
      LogMirror::Open(backup.get(), 1, log::LogKind::kLarge, &mirrors[1]).ok());

  std::mutex mutex;
  Filling filling[2];
  auto persist = [&](size_t log, bool sealed) {
    Filling& f = filling[log];
    const Status status = mirrors[log]->Persist(
        f.segment, f.chain_index, std::string_view(f.bytes).substr(0, f.end),
        sealed);
    EXPECT_TRUE(status.ok()) << status.ToString();
    f.active = false;
  };
  lsm::RegionContext context;
  context.volume = volume.get();
  context.sync_group = &sync_group;
  context.nodes = &nodes;
  context.records = &records;
  context.compactions = &pool;
  context.on_log_append = [&](uint64_t region_id, log::LogKind kind,
                              const log::AppendedBytes& appended) {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(region_id, 1u);
    const size_t log = kind == log::LogKind::kSmall ? 0 : 1;
    Filling& f = filling[log];
    if (f.active && appended.segment != f.segment) {
      EXPECT_EQ(appended.chain_index, f.chain_index + 1);
      persist(log, /*sealed=*/true);  // flush-tail
    }
    if (!f.active) {
      f = {true, appended.segment, appended.chain_index,
           std::string(kSegment, '\0'), 0};
    }
    ASSERT_LE(appended.offset + appended.bytes.size(), kSegment);
    f.bytes.replace(appended.offset, appended.bytes.size(), appended.bytes);
    f.end = std::max<size_t>(f.end, appended.offset + appended.bytes.size());
  };
  lsm::RegionOptions options;
  options.l0_size_bytes = 256u << 20;  // no compaction: the logs stay whole
  std::unique_ptr<lsm::Region> region;
  ASSERT_TRUE(lsm::Region::Create(context, "users", 1, options, &region).ok());

  // Every size category, overwrites and deletes; syncs now and then put
  // sync marks in the logs.
  testing::RandomBytes random(11);
  for (int i = 0; i < 6000; ++i) {
    const std::string key = "key" + std::to_string(i % 4000);
    if (i % 37 == 0) {
      ASSERT_TRUE(region->Delete(key).ok());
      continue;
    }
    const size_t size = i % 3 == 0 ? 10 : i % 3 == 1 ? 900 : 5000;
    ASSERT_TRUE(region->Put(key, random.Bytes(size)).ok());
    if (i % 1000 == 0) {
      ASSERT_TRUE(region->Sync().ok());
    }
  }
  ASSERT_TRUE(region->Sync().ok());
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t log = 0; log < 2; ++log) {
      if (filling[log].active) persist(log, /*sealed=*/false);  // the tails
    }
  }

  const log::LogKind kinds[2] = {log::LogKind::kSmall, log::LogKind::kLarge};
  for (size_t log = 0; log < 2; ++log) {
    std::map<uint64_t, uint64_t> primary_chain, backup_chain;
    for (const auto& [primary, copy] : mirrors[log]->segments()) {
      primary_chain[copy.chain_index] = primary;
      backup_chain[copy.chain_index] = copy.backup_segment;
    }
    const std::vector<Replayed> expected =
        Replay(volume->file(), 1, kinds[log], primary_chain);
    const std::vector<Replayed> mirrored =
        Replay(backup->file(), 1, kinds[log], backup_chain);
    EXPECT_GT(expected.size(), 1000u) << log;
    EXPECT_TRUE(mirrored == expected)
        << "log " << log << ": " << mirrored.size() << " records against "
        << expected.size();
  }
  EXPECT_GE(mirrors[1]->segments().size(), 3u);  // the large log rolled
  region.reset();
}

}  // namespace
}  // namespace kvs::replication
