// A group left with no backup holding its writes -- every backup failed or
// joining again, or none listed for a region meant to be replicated -- is
// "alone" (replicator.h): it acknowledges a write only once the write is on
// the primary's disk, so a kill -9 of that primary right after loses
// nothing it acknowledged. The engines here never flush by themselves, so a
// write acknowledged from the primary's memory alone would be lost.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "replication/replication_test_fixture.h"

namespace kvs::replication {
namespace {

using test::kStreamKey;

class AlonePrimaryTest : public test::ReplicationTest {
 protected:
  void SetUp() override {
    flush_interval_ms_ = 3'600'000;  // no flush but the writes' own syncs
    ReplicationTest::SetUp();
  }

  // The primary's placement, replicated, with the backup listed (joining
  // or not) or none.
  service::Placement AsPrimary(bool listed, bool joining) const {
    service::Placement placement;
    placement.stream_key = kStreamKey;
    placement.replicated = true;
    if (listed) {
      placement.backups.push_back(
          {"127.0.0.1", static_cast<uint16_t>(backup_.server->port()),
           joining});
    }
    return placement;
  }

  void AttachBackup(uint64_t epoch) {
    service::Placement as_backup;
    as_backup.stream_key = kStreamKey;
    as_backup.primary = false;
    as_backup.joining = true;
    ASSERT_TRUE(
        backup_.service.Attach(7, epoch, backup_.region, as_backup).ok());
  }

  // Writes keys 0..count-1 at `epoch`, each acknowledged.
  void WriteKeys(uint64_t epoch, int count) {
    for (int i = 0; i < count; ++i) {
      const wire::Reply reply = Call(Make(
          wire::Opcode::kPut, epoch, "key" + std::to_string(i), ValueFor(i)));
      ASSERT_EQ(reply.status, Status::Code::kOk) << i << " " << reply.message;
    }
  }

  // After the primary's kill and reopen: keys 0..count-1 hold their values.
  void ExpectKeys(int count) {
    for (int i = 0; i < count; ++i) {
      std::string value;
      const Status got =
          primary_.region->Get("key" + std::to_string(i), &value);
      ASSERT_TRUE(got.ok()) << "key" << i << ": " << got.ToString();
      EXPECT_EQ(value, ValueFor(i)) << i;
    }
  }
};

// The write waits for a backup whose stream failed (the backup is at
// another epoch); the master's reopen drops the backup, and the write is
// acknowledged by the primary alone -- from its disk.
TEST_P(AlonePrimaryTest, AWriteWhoseBackupLeftIsOnDiskWhenAcknowledged) {
  AttachBackup(3);
  ASSERT_TRUE(
      primary_.service.Attach(7, 4, primary_.region, AsPrimary(true, false))
          .ok());
  std::thread writer([&] {
    const wire::Reply reply =
        Call(Make(wire::Opcode::kPut, 4, "key0", ValueFor(0)));
    EXPECT_EQ(reply.status, Status::Code::kOk) << reply.message;
  });
  while (primary_.service.BackupsCaughtUp(7) != -1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(
      primary_.service.Attach(7, 4, primary_.region, AsPrimary(false, false))
          .ok());
  writer.join();
  KillAndReopenPrimary();
  ExpectKeys(1);
}

// Every backup joining (the master reopened the region after their
// streams failed): writes do not wait for them, so only the primary's disk
// may hold them when acknowledged.
TEST_P(AlonePrimaryTest, WritesWhileEveryBackupJoinsAreOnDiskWhenAcknowledged) {
  AttachBackup(5);
  ASSERT_TRUE(
      primary_.service.Attach(7, 5, primary_.region, AsPrimary(true, true))
          .ok());
  WriteKeys(5, 200);
  KillAndReopenPrimary();
  ExpectKeys(200);
}

// A replicated region whose group lists no backup (the master removed the
// dead ones and has no server to replace them), on a primary that never
// replicated it (a fresh process): writes are on its disk when
// acknowledged.
TEST_P(AlonePrimaryTest, WritesOfAReplicatedRegionWithNoBackupAreOnDisk) {
  ASSERT_TRUE(
      primary_.service.Attach(7, 6, primary_.region, AsPrimary(false, false))
          .ok());
  WriteKeys(6, 200);
  KillAndReopenPrimary();
  ExpectKeys(200);
}

INSTANTIATE_TEST_SUITE_P(Providers, AlonePrimaryTest,
                         ::testing::Values(fabric::Provider::kShm,
                                           fabric::Provider::kTcp,
                                           fabric::Provider::kStream),
                         [](const auto& param_info) {
                           return std::string(
                               fabric::ProviderName(param_info.param));
                         });

}  // namespace
}  // namespace kvs::replication
