// Send-Index between two region services, each behind its own fabric
// server (shm and tcp): the primary ships its log segments and compacted
// index segments; the backup's installed levels must read as the
// primary's after every batch of writes -- including those the primary
// held before the stream opened (the catch-up) and after a reopen at a new
// epoch, which starts the backup over.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "channel/server.h"
#include "engine/engine.h"
#include "fabric/endpoint.h"
#include "replication/contents_digest.h"
#include "replication/send_index_nodes.h"
#include "service/region_service.h"
#include "testing/conditional_writes.h"
#include "testing/level_compare.h"
#include "testing/memory_device.h"
#include "testing/random_keys.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::replication {
namespace {

using index_test::Node;
const std::string& kStreamKey = index_test::kSendIndexStreamKey;

class SendIndexTest : public index_test::SendIndexNodes {
 protected:
  // The backup node restarts and comes back (a new fabric server) with what
  // its volume holds. The group shrinks first, as the master would once the
  // backup's session expired (and in one process, shm must not write to an
  // endpoint that is gone).
  void RestartBackup() {
    service::Placement alone;
    alone.stream_key = kStreamKey;
    alone.mode = ReplicationMode::kSendIndex;
    ASSERT_TRUE(
        primary_.service.Attach(7, ++epoch_, primary_.region, alone).ok());
    backup_.service.Detach(7);
    backup_.service.DisableReplication();
    backup_.server.reset();
    backup_.service.UseEngine(nullptr);
    backup_.region = nullptr;
    backup_.engine.reset();
    ASSERT_TRUE(engine::Engine::Open(backup_.device->Open(), Options(), false,
                                     &backup_.engine)
                    .ok());
    ASSERT_TRUE(backup_.engine->OpenRegion("r7", &backup_.region).ok());
    backup_.service.UseEngine(backup_.engine.get());
    StartServer(&backup_);
  }

  // The group at `epoch`, led by the primary node; a `joining` backup is
  // started over by a new stream, one in sync keeps its stream.
  void Place(uint64_t epoch, bool joining = false) {
    service::Placement as_backup;
    as_backup.stream_key = kStreamKey;
    as_backup.primary = false;
    as_backup.primary_server = "primary";
    as_backup.joining = joining;
    as_backup.mode = ReplicationMode::kSendIndex;
    ASSERT_TRUE(
        backup_.service.Attach(7, epoch, backup_.region, as_backup).ok());
    service::Placement as_primary;
    as_primary.stream_key = kStreamKey;
    as_primary.mode = ReplicationMode::kSendIndex;
    as_primary.backups.push_back(
        {"127.0.0.1", static_cast<uint16_t>(backup_.server->port()), joining});
    ASSERT_TRUE(
        primary_.service.Attach(7, epoch, primary_.region, as_primary).ok());
    epoch_ = epoch;
  }

  // Values of every size category, overwrites and deletes, through the
  // service (so replicated) or straight into the region (before the
  // stream exists).
  void Write(int operations, bool through_service, int keys = 6000) {
    testing::RandomBytes random(5 + written_);
    for (int i = written_; i < written_ + operations; ++i) {
      const std::string key = "key" + std::to_string(i % keys);
      const bool remove = i % 29 == 0;
      const size_t size = i % 3 == 0 ? 8 : i % 3 == 1 ? 500 : 3000;
      const std::string value = remove ? "" : random.Bytes(size);
      if (!through_service) {
        ASSERT_TRUE((remove ? primary_.region->Delete(key)
                            : primary_.region->Put(key, value))
                        .ok());
        continue;
      }
      const wire::Reply reply = Through(
          remove ? wire::Opcode::kDelete : wire::Opcode::kPut, key, value);
      ASSERT_EQ(reply.status, Status::Code::kOk) << reply.message;
    }
    written_ += operations;
    primary_.region->WaitForCompactions();
  }

  // A write of region 7 through the primary's service at the current
  // epoch (replicated): its reply.
  wire::Reply Through(wire::Opcode opcode, std::string_view key,
                      std::string_view value) {
    wire::Request request;
    request.opcode = opcode;
    request.region_id = 7;
    request.epoch = epoch_;
    request.key = key;
    request.value = value;
    std::string bytes, reply_bytes;
    wire::EncodeRequest(request, &bytes);
    primary_.service.Handle(nullptr, bytes, &reply_bytes);
    wire::Reply reply;
    EXPECT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
    return reply;
  }

  // Waits until `primary` (a service leading region 7) reports every
  // backup caught up: its new stream's catch-up landed.
  static void AwaitCaughtUp(const service::RegionService& primary,
                            const char* what) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (primary.BackupsCaughtUp(7) != 1) {
      ASSERT_NE(primary.BackupsCaughtUp(7), -1) << "the stream failed";
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << what << " did not finish";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // Waits until the backup installed as many levels, of the same sizes,
  // as the primary holds, then compares them entry by entry.
  void ExpectBackupCaughtUp() {
    SCOPED_TRACE("after " + std::to_string(written_) + " writes");
    std::vector<lsm::LevelDescriptor> primary_levels =
        primary_.region->LevelDescriptors();
    std::map<size_t, lsm::LevelDescriptor> backup_levels;
    const auto matches = [&] {
      if (!backup_.service.BackupLevels(7, &backup_levels).ok()) return false;
      size_t present = 0;
      for (size_t level = 0; level < primary_levels.size(); ++level) {
        if (primary_levels[level].empty()) continue;
        ++present;
        const auto it = backup_levels.find(level);
        if (it == backup_levels.end() ||
            it->second.entries != primary_levels[level].entries ||
            it->second.kv_bytes != primary_levels[level].kv_bytes) {
          return false;
        }
      }
      return present == backup_levels.size();
    };
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!matches()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "the backup did not install the primary's levels";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    size_t compared = 0;
    for (size_t level = 0; level < primary_levels.size(); ++level) {
      if (primary_levels[level].empty()) continue;
      lsm::NodeCache nodes(primary_.engine->volume()->file(), 8 << 20);
      const Status same = testing::CompareLevels(
          primary_.engine->volume()->file(), &nodes, primary_levels[level],
          backup_.engine->volume()->file(), backup_levels.at(level), &counts_);
      ASSERT_TRUE(same.ok()) << "level " << level << ": " << same.ToString();
      ++compared;
    }
    EXPECT_GT(compared, 0u);
    ExpectSameDigests(compared);
  }

  // The digests ./kvs local verify compares agree once the backup holds
  // every log byte the primary wrote: what the primary serves, and what the
  // backup would serve if promoted (its levels, and the records of its log
  // copies and buffers past them).
  void ExpectSameDigests(size_t levels) {
    ContentsDigest ours, theirs;
    const auto same = [&] {
      EXPECT_TRUE(DigestRegion(*primary_.region, &ours).ok());
      const Status replica = backup_.service.ReplicaDigest(7, &theirs);
      return replica.ok() && ours.digest == theirs.digest &&
             ours.pairs == theirs.pairs &&
             ours.level_pairs == theirs.level_pairs &&
             ours.last_lsn == theirs.last_lsn;
    };
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!same()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "the backup would serve " << theirs.pairs << " pairs to LSN "
          << theirs.last_lsn << ", its primary serves " << ours.pairs
          << " to LSN " << ours.last_lsn;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(ours.levels, levels);
    EXPECT_EQ(theirs.levels, levels);
    EXPECT_GT(theirs.level_pairs, 0u);
    EXPECT_GT(theirs.pairs, 0u);
    EXPECT_EQ(theirs.dropped, 0u);
    EXPECT_EQ(theirs.compacted_lsn + theirs.past_levels, theirs.last_lsn);
  }

  // GC mirroring: once the stream caught up, every copy the backup keeps is
  // of a segment the primary still holds: a live segment of that log, or a
  // medium segment one of its levels holds.
  void ExpectNoStaleCopies() {
    const auto stale = [&](std::string* which) {
      std::set<uint64_t> medium;
      for (const lsm::LevelDescriptor& level :
           primary_.region->LevelDescriptors()) {
        medium.insert(level.medium_segments.begin(),
                      level.medium_segments.end());
      }
      for (const log::LogKind kind :
           {log::LogKind::kSmall, log::LogKind::kLarge,
            log::LogKind::kMedium}) {
        std::set<uint64_t> live = medium;
        if (kind != log::LogKind::kMedium) {
          live.clear();
          for (const auto& [chain, segment] :
               primary_.region->LogSegments(kind)) {
            live.insert(segment);
          }
        }
        std::map<uint64_t, MirroredSegment> copies;
        if (!backup_.service.BackupCopies(7, kind, &copies).ok()) return true;
        for (const auto& [segment, copy] : copies) {
          if (live.count(segment) == 0) {
            *which = std::string(log::LogKindName(kind)) + " segment " +
                     std::to_string(segment);
            return true;
          }
        }
      }
      return false;
    };
    std::string which;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (stale(&which)) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "the backup still holds a copy of " << which
          << ", which the primary freed";
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Promotes the backup (into *promoted, null if that failed) and expects
  // it to hold every pair of `acknowledged`.
  void PromoteExpectingEvery(
      const std::map<std::string, std::string>& acknowledged,
      lsm::Region** promoted) {
    *promoted = nullptr;
    service::PromotionReport report;
    const Status promotion =
        backup_.service.PromoteBackup(7, "r7", {}, promoted, &report);
    ASSERT_TRUE(promotion.ok()) << promotion.ToString();
    size_t lost = 0;
    for (const auto& [key, value] : acknowledged) {
      std::string held;
      if (!(*promoted)->Get(key, &held).ok() || held != value) ++lost;
    }
    EXPECT_EQ(lost, 0u) << "of " << acknowledged.size() << " acknowledged";
  }

  uint64_t epoch_ = 0;
  int written_ = 0;
  testing::LevelComparison counts_;
};

TEST_P(SendIndexTest, BackupLevelsReadAsThePrimarysAcrossCompactions) {
  // Data from before the stream: the catch-up ships it.
  Write(3000, /*through_service=*/false);
  ASSERT_GE(primary_.region->stats().compactions, 1u);
  Place(3);
  ExpectBackupCaughtUp();
  for (int batch = 0; batch < 6; ++batch) {
    Write(2000, /*through_service=*/true);
    ExpectBackupCaughtUp();
    ExpectNoStaleCopies();
  }
  EXPECT_GT(primary_.region->stats().compactions, 5u);
  EXPECT_GT(counts_.medium_values, 0u);
  EXPECT_GT(counts_.moved_pointers, 0u);
  const ReplicatorStats shipped = primary_.service.ReplicationStats();
  EXPECT_GT(shipped.index_bytes, 0u);
  EXPECT_GT(backup_.service.BackupStats().segments, 0u);
  // The backup ran no compaction of its own: its region holds nothing.
  EXPECT_EQ(backup_.region->stats().compactions, 0u);
  EXPECT_EQ(backup_.region->stats().l0_entries, 0u);

  // A new epoch under the same primary: the backup keeps its stream and
  // what it holds (nothing is shipped again).
  const uint64_t shipped_before = primary_.service.ReplicationStats().bytes;
  Place(4);
  Write(2000, /*through_service=*/true);
  ExpectBackupCaughtUp();
  EXPECT_LT(primary_.service.ReplicationStats().bytes - shipped_before,
            uint64_t{40} << 20);
  EXPECT_EQ(primary_.service.BackupsCaughtUp(7), 1);

  // Joining (the master no longer counts it in sync): a new stream starts
  // it over, and it catches up again.
  Place(5, /*joining=*/true);
  AwaitCaughtUp(primary_.service, "the joining backup's catch-up");
  ExpectBackupCaughtUp();
  Write(2000, /*through_service=*/true);
  ExpectBackupCaughtUp();
}

// A joining backup whose catch-up ended holds every write from then on
// (writes wait for it), but the master does not count it in sync until it
// opens the region here again so: were the primary killed meanwhile, the
// master would not promote that backup and the primary would lead again
// from its own disk. So until then every write is on the primary's disk
// when acknowledged (its engine flushes nothing by itself here); opened
// again with the backup in sync, the stream carries on.
TEST_P(SendIndexTest, AJoiningBackupMakesNoWriteDurableUntilCountedInSync) {
  flush_interval_ms_ = 3'600'000;
  primary_.service.DisableReplication();
  primary_.server.reset();
  primary_.service.UseEngine(nullptr);
  primary_.region = nullptr;
  primary_.engine.reset();
  StartNode(&primary_);  // with the long flush interval
  Place(3, /*joining=*/true);
  AwaitCaughtUp(primary_.service, "the joining backup's catch-up");
  std::map<std::string, std::string> written;
  for (int i = 0; i < 300; ++i) {
    const std::string key = "durable" + std::to_string(i);
    const std::string value(i % 3 == 0   ? 8
                            : i % 3 == 1 ? 500
                                         : 3000,
                            static_cast<char>('a' + i % 26));
    ASSERT_EQ(Through(wire::Opcode::kPut, key, value).status,
              Status::Code::kOk);
    written[key] = value;
  }
  // The master records the backup in sync and opens the region here again:
  // the stream is kept (nothing shipped anew), writes go on.
  const uint64_t catch_up_bytes =
      primary_.service.ReplicationStats().catch_up_bytes;
  Place(3, /*joining=*/false);
  ASSERT_EQ(Through(wire::Opcode::kPut, "after", "in sync").status,
            Status::Code::kOk);
  EXPECT_EQ(primary_.service.ReplicationStats().catch_up_bytes, catch_up_bytes);
  EXPECT_EQ(primary_.service.BackupsCaughtUp(7), 1);
  // kill -9 of the primary: what its engine had not written is gone.
  primary_.device->Crash(testing::MemoryDevice::CrashMode::kProcessKill);
  primary_.service.DisableReplication();
  primary_.service.Detach(7);
  primary_.service.UseEngine(nullptr);  // the service must not outlive it
  primary_.region = nullptr;
  primary_.engine.reset();
  ASSERT_TRUE(engine::Engine::Open(primary_.device->Open(), Options(), false,
                                   &primary_.engine)
                  .ok());
  ASSERT_TRUE(primary_.engine->OpenRegion("r7", &primary_.region).ok());
  for (const auto& [key, value] : written) {
    std::string read;
    const Status got = primary_.region->Get(key, &read);
    ASSERT_TRUE(got.ok()) << key << " acknowledged, lost: " << got.ToString();
    EXPECT_EQ(read, value) << key;
  }
}

// A catch-up reads the region from the device as its stream sends it: a
// region larger than the read-ahead bound (24,000 distinct keys, about 28 MB
// of values that no garbage collection can free) is shipped whole while the
// stream holds at most that bound (and the segment being read) in memory.
TEST_P(SendIndexTest, ACatchUpHoldsABoundedAmountInMemory) {
  Write(24000, /*through_service=*/false, /*keys=*/24000);
  Place(3);
  AwaitCaughtUp(primary_.service, "the catch-up");
  ExpectBackupCaughtUp();
  const ReplicatorStats shipped = primary_.service.ReplicationStats();
  EXPECT_GT(shipped.catch_up_bytes, limits::catch_up_read_ahead_bytes);
  EXPECT_LE(shipped.catch_up_ahead_peak_bytes,
            limits::catch_up_read_ahead_bytes + limits::segment_size_bytes);
}

// A backup that comes back (restarted, with what its disk holds) gets only
// what it lacks: its copies and installed levels are of the primary's
// lineage, so the catch-up leaves out what they hold; what the primary
// changed meanwhile (compactions, freed segments) is sent or dropped.
TEST_P(SendIndexTest, ARejoiningBackupGetsOnlyWhatItLacks) {
  Write(6000, /*through_service=*/false);
  primary_.region->WaitForCompactions();
  Place(3);
  AwaitCaughtUp(primary_.service, "the first catch-up");
  ExpectBackupCaughtUp();
  const uint64_t whole = primary_.service.ReplicationStats().catch_up_bytes;
  Write(1000, /*through_service=*/true);
  // Compactions the writes started end and reach the backup first (one cut
  // short by the restart would rightly be sent again).
  primary_.region->WaitForCompactions();
  ExpectBackupCaughtUp();

  // Back with nothing changed meanwhile: only the logs' tails again.
  RestartBackup();
  uint64_t before = primary_.service.ReplicationStats().catch_up_bytes;
  Place(epoch_ + 1, /*joining=*/true);
  AwaitCaughtUp(primary_.service, "the rejoining backup's catch-up");
  ExpectBackupCaughtUp();
  const uint64_t resent =
      primary_.service.ReplicationStats().catch_up_bytes - before;
  EXPECT_LT(resent, whole / 4) << "resent " << resent << " of " << whole;
  std::printf(
      "rejoin after a restart resent %llu of the %llu bytes the first "
      "catch-up sent\n",
      static_cast<unsigned long long>(resent),
      static_cast<unsigned long long>(whole));
  Write(1000, /*through_service=*/true);
  ExpectBackupCaughtUp();

  // Back after the primary compacted and freed segments meanwhile: the
  // changed levels come again, the stale ones and stale copies go.
  RestartBackup();
  Write(3000, /*through_service=*/false);
  Place(epoch_ + 1, /*joining=*/true);
  AwaitCaughtUp(primary_.service, "the second rejoin's catch-up");
  ExpectBackupCaughtUp();
  ExpectNoStaleCopies();
  Write(2000, /*through_service=*/true);
  ExpectBackupCaughtUp();
  ExpectNoStaleCopies();
}

// A rejoining backup resumes its copy of the logs' current segments: the
// catch-up sends what it lacks, and every write after lands in the stream's
// buffers. A promotion must read those bytes before any FLUSH-TAIL persists
// them, so the buffer holds each resumed segment from its first byte: it
// once held only the bytes from the block the copy ended in, no segment
// header, and a promotion took the shorter copy -- the chaos campaign's
// verify found such a backup, counted in sync, missing every write past
// its levels ("0 past them, 285 dropped").
TEST_P(SendIndexTest, AResumedCopyServesAPromotionBeforeItsTailIsPersisted) {
  Write(3000, /*through_service=*/false);
  Place(3);
  AwaitCaughtUp(primary_.service, "the first catch-up");
  ExpectBackupCaughtUp();
  Write(300, /*through_service=*/true);
  // The primary hands its region over cleanly (its tails persisted at the
  // backup), and takes it back: the same incarnation, so the backup's copies
  // resume.
  primary_.service.Detach(7);
  Place(epoch_ + 1, /*joining=*/true);
  AwaitCaughtUp(primary_.service, "the rejoining backup's catch-up");
  // A few writes, far from filling a segment: none is persisted at the
  // backup, every one landed in its buffers.
  std::map<std::string, std::string> acknowledged;
  for (int i = 0; i < 40; ++i) {
    const std::string key = "resumed" + std::to_string(i);
    // Small values and large ones: both logs' current segments resumed.
    const std::string value(static_cast<size_t>(i % 2 == 0 ? 3000 : 8 + i),
                            static_cast<char>('a' + i % 26));
    ASSERT_EQ(Through(wire::Opcode::kPut, key, value).status,
              Status::Code::kOk);
    acknowledged[key] = value;
  }
  ContentsDigest theirs;
  ASSERT_TRUE(backup_.service.ReplicaDigest(7, &theirs).ok());
  EXPECT_EQ(theirs.dropped, 0u);
  ContentsDigest ours;
  ASSERT_TRUE(DigestRegion(*primary_.region, &ours).ok());
  EXPECT_EQ(theirs.last_lsn, ours.last_lsn);
  EXPECT_EQ(theirs.digest, ours.digest);
  // Promoted without its primary's last hand-over (a crash).
  lsm::Region* promoted = nullptr;
  PromoteExpectingEvery(acknowledged, &promoted);
  if (promoted == nullptr) return;
}

// A backup that comes back holding a level its primary has since emptied
// (merged into the next one) gets it removed, and still knows the LSN its
// levels hold every write to: the removal once told it 0, so the backup --
// counted in sync again after the catch-up -- would have replayed its log
// copies from LSN 1 if promoted, found the first long freed, and dropped
// every write past its levels (found by the chaos campaign's verify).
TEST_P(SendIndexTest, ARejoiningBackupWhoseLevelWasEmptiedKeepsItsLsn) {
  // Enough that the small log's first segments were compacted and freed:
  // LSN 1 is gone from the primary's logs and the backup's copies.
  Write(16000, /*through_service=*/false);
  const auto first_level_empty = [&] {
    const auto levels = primary_.region->LevelDescriptors();
    return levels.empty() || levels[0].empty();
  };
  // The backup leaves holding the first level ...
  for (int batch = 0; batch < 40 && first_level_empty(); ++batch) {
    Write(500, /*through_service=*/false);
  }
  ASSERT_FALSE(first_level_empty());
  Place(3);
  AwaitCaughtUp(primary_.service, "the first catch-up");
  ExpectBackupCaughtUp();
  RestartBackup();
  // ... which is merged into the next one meanwhile.
  for (int batch = 0; batch < 40 && !first_level_empty(); ++batch) {
    Write(500, /*through_service=*/false);
  }
  ASSERT_TRUE(first_level_empty());
  ASSERT_GT(primary_.region->LogSegments(log::LogKind::kSmall).begin()->first,
            0u)
      << "the small log's first segment was never freed";
  Place(epoch_ + 1, /*joining=*/true);
  AwaitCaughtUp(primary_.service, "the rejoining backup's catch-up");
  ExpectBackupCaughtUp();
  Write(500, /*through_service=*/true);
  ExpectBackupCaughtUp();
}

// A backup that joins a primary whose levels are all empty (every key was
// deleted and the tombstones merged away at the last level) still learns
// the LSN to which the primary's logs were compacted: no level is shipped
// to carry it, and without it the backup, promoted, would replay its log
// copies from LSN 1, find it long freed, and drop every write past it.
TEST_P(SendIndexTest, AFreshBackupOfAPrimaryWithNoLevelsLearnsItsLsn) {
  Write(16000, /*through_service=*/false);
  const auto levels_empty = [&] {
    for (const auto& level : primary_.region->LevelDescriptors()) {
      if (!level.empty()) return false;
    }
    return true;
  };
  // Every key deleted, then deletes of keys never written, until a merge
  // took the tombstones into the last level and every level went with them
  // (checked after batches far smaller than an L0).
  for (int i = 0; i < 6000; ++i) {
    ASSERT_TRUE(primary_.region->Delete("key" + std::to_string(i)).ok());
  }
  for (int batch = 0; batch < 2000 && !levels_empty(); ++batch) {
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(
          primary_.region
              ->Delete("gone" + std::to_string(batch) + "-" + std::to_string(i))
              .ok());
    }
    primary_.region->WaitForCompactions();
  }
  std::string shape;
  for (const auto& level : primary_.region->LevelDescriptors()) {
    shape += " " + std::to_string(level.entries);
  }
  ASSERT_TRUE(levels_empty()) << "the levels never emptied:" << shape;
  // A few live pairs, in L0 only.
  testing::RandomBytes random(17);
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(
        primary_.region->Put("live" + std::to_string(i), random.Bytes(100))
            .ok());
  }
  ASSERT_GT(primary_.region->LogSegments(log::LogKind::kSmall).begin()->first,
            0u)
      << "the small log's first segment was never freed";
  Place(3);
  AwaitCaughtUp(primary_.service, "the catch-up");
  ContentsDigest ours, theirs;
  const auto same = [&] {
    EXPECT_TRUE(DigestRegion(*primary_.region, &ours).ok());
    return backup_.service.ReplicaDigest(7, &theirs).ok() &&
           ours.digest == theirs.digest && ours.last_lsn == theirs.last_lsn;
  };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!same()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "the backup would serve " << theirs.pairs << " pairs to LSN "
        << theirs.last_lsn << " (" << theirs.dropped
        << " dropped, compacted LSN " << theirs.compacted_lsn
        << "), its primary serves " << ours.pairs << " to LSN " << ours.last_lsn
        << " (compacted LSN " << ours.compacted_lsn << ")";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(theirs.pairs, 300u);
  EXPECT_EQ(theirs.dropped, 0u);
  EXPECT_EQ(theirs.compacted_lsn, ours.compacted_lsn);
  EXPECT_GT(theirs.compacted_lsn, 0u);
}

// A backup in sync may be promoted, so it never lets a new stream start it
// over: the stream fails (the primary reports it) until the master counts
// it as joining.
TEST_P(SendIndexTest, ABackupInSyncRefusesANewStreamUntilItIsJoining) {
  Write(3000, /*through_service=*/false);
  Place(3);
  ExpectBackupCaughtUp();
  // Another primary leads at epoch 4 (a promotion, say: a region of
  // another lineage; here another engine region of the same node, with
  // data of its own) and opens a new stream to the backup, which the master
  // still counts in sync.
  primary_.service.Detach(7);
  ASSERT_TRUE(primary_.engine->CreateRegion("other", &primary_.region).ok());
  written_ = 0;
  Write(2000, /*through_service=*/false);
  service::Placement as_backup;
  as_backup.stream_key = kStreamKey;
  as_backup.primary = false;
  as_backup.primary_server = "another";
  ASSERT_TRUE(backup_.service.Attach(7, 4, backup_.region, as_backup).ok());
  service::Placement as_primary;
  as_primary.stream_key = kStreamKey;
  as_primary.mode = ReplicationMode::kSendIndex;
  as_primary.backups.push_back(
      {"127.0.0.1", static_cast<uint16_t>(backup_.server->port()), false});
  ASSERT_TRUE(primary_.service.Attach(7, 4, primary_.region, as_primary).ok());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (primary_.service.BackupsCaughtUp(7) != -1) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "the new stream was not refused";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // What it held is still there.
  EXPECT_TRUE(backup_.service.HoldsReplica("r7"));
  // A stream of its own lineage would resume from it, not start it over,
  // so it is let in (ARejoiningBackupGetsOnlyWhatItLacks). Joining at epoch
  // 5: started over and caught up.
  as_backup.joining = true;
  ASSERT_TRUE(backup_.service.Attach(7, 5, backup_.region, as_backup).ok());
  as_primary.backups[0].joining = true;
  ASSERT_TRUE(primary_.service.Attach(7, 5, primary_.region, as_primary).ok());
  epoch_ = 5;
  AwaitCaughtUp(primary_.service, "the joining backup's catch-up");
  ExpectBackupCaughtUp();
}

// Every key reads the same from the primary and the promoted backup;
// returns how many are present.
size_t ExpectSameContents(lsm::Region* primary, lsm::Region* promoted) {
  size_t present = 0, absent = 0;
  for (int i = 0; i < 6000; ++i) {
    const std::string key = "key" + std::to_string(i);
    std::string ours, theirs;
    const Status expected = primary->Get(key, &ours);
    const Status got = promoted->Get(key, &theirs);
    EXPECT_EQ(expected.code(), got.code())
        << key << ": " << expected.ToString() << " vs " << got.ToString();
    if (expected.ok() && got.ok()) {
      EXPECT_EQ(ours, theirs) << key;
      ++present;
    } else {
      ++absent;
    }
  }
  EXPECT_GT(absent, 0u);  // deleted keys stay deleted
  return present;
}

TEST_P(SendIndexTest, APromotedBackupOwnsWhatItHeldAndKeepsItAcrossRestarts) {
  Write(3000, /*through_service=*/false);
  Place(3);
  ExpectBackupCaughtUp();
  for (int batch = 0; batch < 4; ++batch) {
    Write(2000, /*through_service=*/true);
  }
  // Promoted at once: the last writes are in the backup's buffers only
  // (no FLUSH-TAIL yet), and a shipment may be under way.
  const uint64_t installed_before = backup_.service.BackupStats().levels;
  ASSERT_TRUE(backup_.service.HoldsReplica("r7"));
  // What the backup would serve if promoted is what the promotion then
  // serves, and what its primary serves: every write was acknowledged.
  ContentsDigest would_serve, primary_serves;
  ASSERT_TRUE(backup_.service.ReplicaDigest(7, &would_serve).ok());
  ASSERT_TRUE(DigestRegion(*primary_.region, &primary_serves).ok());
  EXPECT_GT(would_serve.past_levels, 0u);
  EXPECT_EQ(would_serve.digest, primary_serves.digest);
  EXPECT_EQ(would_serve.last_lsn, primary_serves.last_lsn);
  lsm::Region* promoted = nullptr;
  service::PromotionReport report;
  const Status promotion =
      backup_.service.PromoteBackup(7, "r7", {}, &promoted, &report);
  ASSERT_TRUE(promotion.ok()) << promotion.ToString();
  ASSERT_NE(promoted, nullptr);
  EXPECT_FALSE(backup_.service.HoldsReplica("r7"));
  EXPECT_GT(installed_before, 0u);
  EXPECT_GT(report.adoption.segments, 0u);
  ContentsDigest serves;
  ASSERT_TRUE(DigestRegion(*promoted, &serves).ok());
  EXPECT_EQ(serves.digest, would_serve.digest);
  EXPECT_EQ(serves.pairs, would_serve.pairs);
  EXPECT_EQ(serves.last_lsn, would_serve.last_lsn);
  EXPECT_EQ(serves.past_levels, promoted->stats().l0_entries);
  // The promoted region holds what the primary acknowledged, part in the
  // adopted levels, the rest replayed from the adopted logs.
  EXPECT_GT(ExpectSameContents(primary_.region, promoted), 5000u);
  EXPECT_GT(promoted->stats().recovery.replayed_writes, 0u);
  EXPECT_FALSE(promoted->LevelDescriptors().empty());
  EXPECT_EQ(promoted->stats().recovery.dropped_writes, 0u);

  // It is a region of its own now: its writes, compactions and GC work on
  // the adopted logs and levels (the stream of the old primary is over).
  std::string bytes, reply;
  primary_.service.DisableReplication();
  testing::RandomBytes random(99);
  for (int i = 0; i < 6000; ++i) {
    const std::string key = "key" + std::to_string(i);
    const std::string value = random.Bytes(i % 3 == 0   ? 8
                                           : i % 3 == 1 ? 500
                                                        : 3000);
    ASSERT_TRUE(promoted->Put(key, value).ok());
    ASSERT_TRUE(primary_.region->Put(key, value).ok());
    if (i % 7 == 0) {
      ASSERT_TRUE(promoted->Delete(key).ok());
      ASSERT_TRUE(primary_.region->Delete(key).ok());
    }
  }
  promoted->WaitForCompactions();
  EXPECT_GT(promoted->stats().compactions, 0u);
  ExpectSameContents(primary_.region, promoted);

  // A restart replays the adopted logs as its own.
  backup_.service.DisableReplication();
  backup_.service.UseEngine(nullptr);
  backup_.engine.reset();
  ASSERT_TRUE(
      engine::Engine::Open(backup_.device->Open(), {}, false, &backup_.engine)
          .ok());
  lsm::Region* reopened = nullptr;
  ASSERT_TRUE(backup_.engine->OpenRegion("r7", &reopened).ok());
  ExpectSameContents(primary_.region, reopened);
  // Nothing is promoted twice.
  backup_.service.UseEngine(backup_.engine.get());
  EXPECT_FALSE(
      backup_.service.PromoteBackup(7, "r7", {}, &promoted, &report).ok());
}

TEST_P(SendIndexTest, APromotedBackupCatchesUpANewBackup) {
  Write(3000, /*through_service=*/false);
  Place(3);
  ExpectBackupCaughtUp();
  Write(4000, /*through_service=*/true);
  lsm::Region* promoted = nullptr;
  service::PromotionReport report;
  ASSERT_TRUE(
      backup_.service.PromoteBackup(7, "r7", {}, &promoted, &report).ok());
  // The old primary's node backs the promoted region up, in a fresh region.
  primary_.service.Detach(7);
  lsm::Region* fresh = nullptr;
  ASSERT_TRUE(primary_.engine->CreateRegion("r7b", &fresh).ok());
  service::Placement as_backup;
  as_backup.stream_key = kStreamKey;
  as_backup.primary = false;
  ASSERT_TRUE(primary_.service.Attach(7, 5, fresh, as_backup).ok());
  service::Placement as_primary;
  as_primary.stream_key = kStreamKey;
  as_primary.mode = ReplicationMode::kSendIndex;
  as_primary.backups.push_back(
      {"127.0.0.1", static_cast<uint16_t>(primary_.server->port())});
  ASSERT_TRUE(backup_.service.Attach(7, 5, promoted, as_primary).ok());
  AwaitCaughtUp(backup_.service,
                "the promoted region's catch-up of a new backup");
  std::map<size_t, lsm::LevelDescriptor> installed;
  ASSERT_TRUE(primary_.service.BackupLevels(7, &installed).ok());
  EXPECT_FALSE(installed.empty());

  // Writes through the promoted primary, then the new backup is promoted in
  // turn (a replica of a replica) and catches up a third region.
  testing::RandomBytes random(17);
  for (int i = 0; i < 3000; ++i) {
    wire::Request request;
    request.opcode = wire::Opcode::kPut;
    request.region_id = 7;
    request.epoch = 5;
    const std::string key = "key" + std::to_string(i % 6000);
    const std::string value = random.Bytes(i % 3 == 0   ? 8
                                           : i % 3 == 1 ? 500
                                                        : 3000);
    request.key = key;
    request.value = value;
    std::string bytes, reply_bytes;
    wire::EncodeRequest(request, &bytes);
    backup_.service.Handle(nullptr, bytes, &reply_bytes);
    wire::Reply reply;
    ASSERT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
    ASSERT_EQ(reply.status, Status::Code::kOk) << reply.message;
  }
  // A new epoch: the stream is replaced and the backup caught up again.
  ASSERT_TRUE(primary_.service.Attach(7, 55, fresh, as_backup).ok());
  ASSERT_TRUE(backup_.service.Attach(7, 55, promoted, as_primary).ok());
  AwaitCaughtUp(backup_.service, "the promoted region's second catch-up");
  lsm::Region* again = nullptr;
  ASSERT_TRUE(
      primary_.service.PromoteBackup(7, "r7b", {}, &again, &report).ok());
  backup_.service.Detach(7);
  lsm::Region* third = nullptr;
  ASSERT_TRUE(backup_.engine->CreateRegion("r7c", &third).ok());
  ASSERT_TRUE(backup_.service.Attach(7, 56, third, as_backup).ok());
  service::Placement back;
  back.stream_key = kStreamKey;
  back.mode = ReplicationMode::kSendIndex;
  back.backups.push_back(
      {"127.0.0.1", static_cast<uint16_t>(backup_.server->port())});
  ASSERT_TRUE(primary_.service.Attach(7, 56, again, back).ok());
  AwaitCaughtUp(primary_.service,
                "a twice-promoted region's catch-up of a new backup");
}

TEST_P(SendIndexTest, ABackupRestartedWithoutItsStreamIsPromotedFromItsDisk) {
  Write(3000, /*through_service=*/false);
  Place(3);
  ExpectBackupCaughtUp();
  Write(2000, /*through_service=*/true);
  // The primary hands its last bytes over (a clean close); the backup
  // then restarts: what it holds is on its volume only.
  primary_.service.DisableReplication();
  backup_.service.DisableReplication();
  backup_.service.UseEngine(nullptr);
  backup_.engine.reset();
  ASSERT_TRUE(
      engine::Engine::Open(backup_.device->Open(), {}, false, &backup_.engine)
          .ok());
  backup_.service.UseEngine(backup_.engine.get());
  lsm::Region* promoted = nullptr;
  service::PromotionReport report;
  const Status promotion =
      backup_.service.PromoteBackup(7, "r7", {}, &promoted, &report);
  ASSERT_TRUE(promotion.ok()) << promotion.ToString();
  EXPECT_EQ(report.adoption.landed_segments, 0u);
  EXPECT_GT(ExpectSameContents(primary_.region, promoted), 4000u);
}

// The session-9 chaos loss, staged: the backup closes its region while the
// primary's stream into it is open (its ZooKeeper session was lost), and is
// opened again under the same primary. The primary's one-sided writes still
// land in the buffers the cut stream had, which nobody applies any more, and
// count as held; so the backup, which the master may count in sync, is
// refused until it is opened joining, and the new stream's catch-up sends
// what it lacks: promoted at the end, it holds every write acknowledged,
// those written while it was cut included.
TEST_P(SendIndexTest, ABackupWhoseStreamWasCutRejoinsAndLosesNothing) {
  Write(3000, /*through_service=*/false);
  Place(3);
  ExpectBackupCaughtUp();
  Write(500, /*through_service=*/true);
  backup_.service.Detach(7);
  std::map<std::string, std::string> acknowledged;
  const auto put = [&](int i) {
    const std::string key = "cut" + std::to_string(i);
    const std::string value(static_cast<size_t>(8 + i * 97 % 3000),
                            static_cast<char>('a' + i % 26));
    if (Through(wire::Opcode::kPut, key, value).status == Status::Code::kOk) {
      acknowledged[key] = value;
    }
  };
  // Written while the backup is cut: acknowledged with its buffers counted.
  for (int i = 0; i < 20; ++i) put(i);
  service::Placement as_backup;
  as_backup.stream_key = kStreamKey;
  as_backup.primary = false;
  as_backup.primary_server = "primary";
  as_backup.mode = ReplicationMode::kSendIndex;
  const Status in_sync =
      backup_.service.Attach(7, 4, backup_.region, as_backup);
  EXPECT_EQ(in_sync.code(), Status::Code::kStaleEpoch) << in_sync.ToString();
  EXPECT_NE(in_sync.ToString().find("joining"), std::string::npos)
      << in_sync.ToString();
  if (in_sync.ok()) {
    // Taken (the defect): the master counts it in sync at epoch 4, and the
    // primary keeps its stream.
    service::Placement as_primary;
    as_primary.stream_key = kStreamKey;
    as_primary.mode = ReplicationMode::kSendIndex;
    as_primary.backups.push_back(
        {"127.0.0.1", static_cast<uint16_t>(backup_.server->port()), false});
    ASSERT_TRUE(
        primary_.service.Attach(7, 4, primary_.region, as_primary).ok());
    epoch_ = 4;
  } else {
    // Refused: the master opens it joining at the next epoch.
    Place(5, /*joining=*/true);
    AwaitCaughtUp(primary_.service, "the rejoining backup's catch-up");
  }
  for (int i = 20; i < 40; ++i) put(i);
  // Counted in sync again at a new epoch, it keeps its new stream.
  Place(6);
  for (int i = 40; i < 60; ++i) put(i);
  EXPECT_EQ(acknowledged.size(), 60u);
  primary_.service.DisableReplication();
  lsm::Region* promoted = nullptr;
  PromoteExpectingEvery(acknowledged, &promoted);
  if (promoted == nullptr) return;
  EXPECT_GT(ExpectSameContents(primary_.region, promoted), 3000u);
}

// An attachment in sync under the same primary that would start the
// backup over (another region object) cuts the open stream the same way:
// refused, and the stream it would have cut carries on.
TEST_P(SendIndexTest, AnAttachThatWouldCutAnOpenStreamInSyncIsRefused) {
  Write(3000, /*through_service=*/false);
  Place(3);
  ExpectBackupCaughtUp();
  lsm::Region* other = nullptr;
  ASSERT_TRUE(backup_.engine->CreateRegion("other", &other).ok());
  service::Placement as_backup;
  as_backup.stream_key = kStreamKey;
  as_backup.primary = false;
  as_backup.primary_server = "primary";
  as_backup.mode = ReplicationMode::kSendIndex;
  const Status refused = backup_.service.Attach(7, 4, other, as_backup);
  EXPECT_EQ(refused.code(), Status::Code::kStaleEpoch) << refused.ToString();
  Write(1000, /*through_service=*/true);
  ExpectBackupCaughtUp();
}

TEST_P(SendIndexTest, ConditionalWritesReachTheBackupAsDecided) {
  Place(3);
  // The reply's views point into its bytes: kept until the next call.
  std::string reply_bytes;
  testing::ConditionalWrites(
      [this, &reply_bytes](const wire::Request& request) {
        std::string bytes;
        reply_bytes.clear();
        wire::EncodeRequest(request, &bytes);
        primary_.service.Handle(nullptr, bytes, &reply_bytes);
        wire::Reply reply;
        EXPECT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
        return reply;
      },
      3);
  // The backup serves, if promoted, what its primary does once its copies
  // hold every log byte (no level yet: nothing was merged).
  ContentsDigest ours, theirs;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    ASSERT_TRUE(DigestRegion(*primary_.region, &ours).ok());
    const Status replica = backup_.service.ReplicaDigest(7, &theirs);
    if (replica.ok() && ours.digest == theirs.digest &&
        ours.pairs == theirs.pairs) {
      break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "the backup would serve " << theirs.pairs << " pairs, its primary "
        << ours.pairs;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ours.pairs, testing::kConditionalWritesPairs);
  // Promoted, it rebuilt the write ids from the records it replayed: a
  // retry of the last increment is answered as its first attempt was.
  lsm::Region* promoted = nullptr;
  service::PromotionReport report;
  ASSERT_TRUE(
      backup_.service.PromoteBackup(7, "r7", {}, &promoted, &report).ok());
  const auto id = promoted->write_ids().Find(
      {testing::kConditionalWriteClient, testing::kConditionalWriteSequence});
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->small_value, coding::Fixed64String(7));
  EXPECT_EQ(promoted->write_ids().horizon(), 0u);  // nothing compacted
}

// Atomic batches whose records lie in both logs (small and large values)
// reach the backup's log copies; promoted without a hand-over, it serves
// every acknowledged batch whole.
TEST_P(SendIndexTest, APromotedBackupServesEveryAcknowledgedBatchWhole) {
  Place(3);
  AwaitCaughtUp(primary_.service, "the first catch-up");
  std::map<std::string, std::string> acknowledged;
  testing::RandomBytes random(11);
  for (int b = 0; b < 300; ++b) {
    std::vector<std::string> keys, values;
    for (int w = 0; w < 8; ++w) {
      keys.push_back("batch" + std::to_string(b) + "-" + std::to_string(w));
      values.push_back(random.Bytes(w % 2 == 0 ? 3000 : 20 + w));
    }
    wire::Request request;
    request.opcode = wire::Opcode::kBatch;
    request.region_id = 7;
    request.epoch = epoch_;
    for (int w = 0; w < 8; ++w) {
      request.writes.push_back({true, keys[w], values[w]});
    }
    std::string bytes, reply_bytes;
    wire::EncodeRequest(request, &bytes);
    primary_.service.Handle(nullptr, bytes, &reply_bytes);
    wire::Reply reply;
    ASSERT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
    ASSERT_EQ(reply.status, Status::Code::kOk) << b;
    for (int w = 0; w < 8; ++w) acknowledged[keys[w]] = values[w];
  }
  lsm::Region* promoted = nullptr;
  PromoteExpectingEvery(acknowledged, &promoted);
}

INSTANTIATE_TEST_SUITE_P(Providers, SendIndexTest,
                         ::testing::Values(fabric::Provider::kShm,
                                           fabric::Provider::kTcp,
                                           fabric::Provider::kStream),
                         [](const auto& param_info) {
                           return std::string(
                               fabric::ProviderName(param_info.param));
                         });

}  // namespace
}  // namespace kvs::replication
