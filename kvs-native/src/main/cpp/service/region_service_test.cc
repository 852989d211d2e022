#include "service/region_service.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "channel/client.h"
#include "channel/server.h"
#include "engine/engine.h"
#include "replication/replication_format.h"
#include "replication/send_index_format.h"
#include "testing/memory_device.h"
#include "util/turns.h"

namespace kvs::service {
namespace {

class RegionServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::EngineOptions options;
    options.sync = true;
    options.volume.grow_step_segments = 4;
    options.region.l0_size_bytes = 1 << 20;
    device_ = testing::MemoryDevice::Create(256u << 20);
    ASSERT_TRUE(
        engine::Engine::Open(device_->Open(), options, true, &engine_).ok());
    ASSERT_TRUE(engine_->CreateRegion("r7", &region_).ok());
    ASSERT_TRUE(service_.Attach(7, 3, region_).ok());
  }

  // Reopens the engine with `options` and region 7 in it, attached again.
  void Reopen(const engine::EngineOptions& options) {
    service_.Detach(7);
    engine_.reset();
    ASSERT_TRUE(
        engine::Engine::Open(device_->Open(), options, false, &engine_).ok());
    ASSERT_TRUE(engine_->OpenRegion("r7", &region_).ok());
    ASSERT_TRUE(service_.Attach(7, 3, region_).ok());
  }

  // Sends `request` as a shard would (from a thread that ends turns: the
  // caller's) and waits for its answer; *deferred says whether it came from
  // another thread (the deferred pool) rather than the caller's.
  wire::Reply CallAsAShard(const wire::Request& request, bool* deferred) {
    std::promise<std::pair<std::thread::id, std::string>> answer;
    std::string bytes;
    wire::EncodeRequest(request, &bytes);
    service_.HandleAsync(nullptr, bytes, [&answer](std::string reply) {
      answer.set_value({std::this_thread::get_id(), std::move(reply)});
    });
    auto [answered_on, reply_bytes] = answer.get_future().get();
    *deferred = answered_on != std::this_thread::get_id();
    wire::Reply reply;
    EXPECT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
    return reply;
  }

  // Sends `request` through the handler and decodes the reply.
  wire::Reply Call(const wire::Request& request) {
    std::string bytes;
    wire::EncodeRequest(request, &bytes);
    reply_bytes_.clear();
    service_.Handle(nullptr, bytes, &reply_bytes_);
    wire::Reply reply;
    EXPECT_TRUE(wire::DecodeReply(reply_bytes_, &reply).ok());
    EXPECT_EQ(reply.request_id, request.request_id);
    return reply;
  }

  static wire::Request Make(wire::Opcode opcode, std::string_view key = {},
                            std::string_view value = {}) {
    wire::Request request;
    request.opcode = opcode;
    request.request_id = 99;
    request.region_id = 7;
    request.epoch = 3;
    request.key = key;
    request.value = value;
    return request;
  }

  std::shared_ptr<testing::MemoryDevice> device_;
  std::unique_ptr<engine::Engine> engine_;
  lsm::Region* region_ = nullptr;
  RegionService service_;
  std::string reply_bytes_;
};

TEST_F(RegionServiceTest, PutGetDeleteScanAndMultiGet) {
  for (int i = 0; i < 50; ++i) {
    const std::string key = "k" + std::to_string(100 + i);
    EXPECT_EQ(Call(Make(wire::Opcode::kPut, key, "v" + key)).status,
              Status::Code::kOk);
  }
  wire::Reply got = Call(Make(wire::Opcode::kGet, "k120"));
  EXPECT_EQ(got.status, Status::Code::kOk);
  EXPECT_EQ(got.value, "vk120");
  EXPECT_EQ(Call(Make(wire::Opcode::kDelete, "k120")).status,
            Status::Code::kOk);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "k120")).status,
            Status::Code::kNotFound);

  wire::Request scan = Make(wire::Opcode::kScan, "k110");
  scan.end = std::string_view("k125");
  scan.limit = 10;
  scan.max_bytes = 1 << 20;
  wire::Reply scanned = Call(scan);
  ASSERT_EQ(scanned.status, Status::Code::kOk);
  ASSERT_EQ(scanned.pairs.size(), 10u);
  EXPECT_EQ(scanned.pairs.front().first, "k110");
  EXPECT_EQ(scanned.pairs.back().first, "k119");
  EXPECT_TRUE(scanned.more);
  scan.key = "k121";
  scanned = Call(scan);
  EXPECT_EQ(scanned.pairs.size(), 4u);  // k121..k124
  EXPECT_FALSE(scanned.more);

  wire::Request multi = Make(wire::Opcode::kMultiGet);
  multi.keys = {"k100", "k120", "k149"};
  wire::Reply values = Call(multi);
  ASSERT_EQ(values.values.size(), 3u);
  EXPECT_EQ(values.values[0].value_or("?"), "vk100");
  EXPECT_FALSE(values.values[1].has_value());
  EXPECT_EQ(values.values[2].value_or("?"), "vk149");
}

// A shard (a thread that ends turns) never waits for the device: a read
// the caches cannot answer is answered from the deferred pool, on another
// thread; once its value is cached, on the shard at once.
TEST_F(RegionServiceTest,
       AShardsReadThatNeedsTheDeviceIsAnsweredByTheDeferredPool) {
  const std::string value(8000, 'v');  // large: in the large log
  for (int i = 0; i < 300; ++i) {      // ~2.4 MB: most of it on the device
    ASSERT_EQ(
        Call(Make(wire::Opcode::kPut, "k" + std::to_string(i), value)).status,
        Status::Code::kOk);
  }
  // Reopened: nothing is cached any more.
  engine::EngineOptions options;
  options.sync = true;
  Reopen(options);

  struct Answer {
    std::promise<std::pair<std::thread::id, std::string>> reply;
  };
  const auto get_on_a_shard = [&](const std::string& key) {
    auto answer = std::make_shared<Answer>();
    auto future = answer->reply.get_future();
    std::string bytes;
    wire::EncodeRequest(Make(wire::Opcode::kGet, key), &bytes);
    std::thread shard([&] {
      SetEndsTurns(true);
      service_.HandleAsync(nullptr, bytes, [answer](std::string reply) {
        answer->reply.set_value({std::this_thread::get_id(), reply});
      });
    });
    const std::thread::id shard_id = shard.get_id();
    shard.join();
    auto [answered_on, reply_bytes] = future.get();
    wire::Reply reply;
    EXPECT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
    EXPECT_EQ(reply.status, Status::Code::kOk) << reply.message;
    EXPECT_EQ(reply.value, value);
    return answered_on != shard_id;
  };
  EXPECT_TRUE(get_on_a_shard("k3")) << "answered on the shard: it waited";
  EXPECT_FALSE(get_on_a_shard("k3")) << "cached, yet deferred";
  // Off a shard nothing is deferred: the caller's thread reads.
  const wire::Reply direct = Call(Make(wire::Opcode::kGet, "k5"));
  EXPECT_EQ(direct.status, Status::Code::kOk);
  EXPECT_EQ(direct.value, value);
}

// A shard's write that might wait for the engine (here: the L0s past the
// engine's memory budget, which only a switch and a compaction bring back)
// is answered from the deferred pool, and every write lands.
TEST_F(RegionServiceTest, AShardsWriteThatMightWaitForTheEngineRunsOnThePool) {
  engine::EngineOptions options;
  // L0s get half of it, 128 KiB: the active L0 (1 MiB, 64 KiB arena blocks)
  // passes it long before it is full.
  options.memory_budget_bytes = 256u << 10;
  options.region.l0_size_bytes = 1u << 20;
  // A chunk that the writes never fill, and a first write off the shard
  // (it starts the log's segment): no write is deferred for its log.
  options.log.chunk_bytes = 1536u << 10;
  Reopen(options);
  ASSERT_EQ(Call(Make(wire::Opcode::kPut, "first", "write")).status,
            Status::Code::kOk);

  const std::string value(1000, 'w');
  int deferred = 0;
  std::thread shard([&] {
    SetEndsTurns(true);
    for (int i = 0; i < 1000; ++i) {
      bool elsewhere = false;
      const wire::Reply reply = CallAsAShard(
          Make(wire::Opcode::kPut, "w" + std::to_string(i), value), &elsewhere);
      ASSERT_EQ(reply.status, Status::Code::kOk) << i << " " << reply.message;
      deferred += elsewhere;
    }
  });
  shard.join();
  EXPECT_GT(deferred, 0) << "no write was deferred: the shard waited";
  EXPECT_LT(deferred, 1000) << "every write deferred: none ran on the shard";
  for (int i = 0; i < 1000; i += 37) {
    const wire::Reply got =
        Call(Make(wire::Opcode::kGet, "w" + std::to_string(i)));
    EXPECT_EQ(got.status, Status::Code::kOk) << i;
    EXPECT_EQ(got.value, value) << i;
  }
}

// A write whose log would put a full chunk on the device (or roll to a new
// segment) goes to the pool: the shard itself never writes to the device.
TEST_F(RegionServiceTest, AShardsWriteThatFillsItsLogsChunkRunsOnThePool) {
  Reopen(engine::EngineOptions{});  // writes that do not sync
  const std::string value(1000, 'c');
  constexpr int kWrites = 1200;  // about 1.2 MB: several 256 KiB chunks
  int deferred = 0;
  uint64_t shard_device_writes = 0;
  std::thread shard([&] {
    SetEndsTurns(true);
    for (int i = 0; i < kWrites; ++i) {
      bool elsewhere = false;
      const wire::Reply reply = CallAsAShard(
          Make(wire::Opcode::kPut, "c" + std::to_string(i), value), &elsewhere);
      ASSERT_EQ(reply.status, Status::Code::kOk) << i << " " << reply.message;
      deferred += elsewhere;
    }
    shard_device_writes = device_->writes_from(std::this_thread::get_id());
  });
  shard.join();
  EXPECT_EQ(shard_device_writes, 0u) << "the shard wrote to the device";
  EXPECT_GE(deferred, 4) << "a chunk filled without deferring its write";
  EXPECT_LT(deferred, kWrites / 10) << "deferred far more than the fills";
  for (int i = 0; i < kWrites; i += 41) {
    const wire::Reply got =
        Call(Make(wire::Opcode::kGet, "c" + std::to_string(i)));
    EXPECT_EQ(got.status, Status::Code::kOk) << i;
    EXPECT_EQ(got.value, value) << i;
  }
}

// In sync mode every write waits for the device: a shard hands each one
// to the pool, never syncing itself.
TEST_F(RegionServiceTest, AShardsWriteThatSyncsRunsOnThePool) {
  engine::EngineOptions options;  // the fixture's region syncs every write
  options.sync = true;

  constexpr int kWrites = 50;
  int on_shard = 0;
  std::thread shard([&] {
    SetEndsTurns(true);
    for (int i = 0; i < kWrites; ++i) {
      bool elsewhere = false;
      const wire::Reply reply = CallAsAShard(
          Make(wire::Opcode::kPut, "s" + std::to_string(i), "synced"),
          &elsewhere);
      ASSERT_EQ(reply.status, Status::Code::kOk) << i << " " << reply.message;
      on_shard += !elsewhere;
    }
  });
  shard.join();
  EXPECT_EQ(on_shard, 0) << "a shard synced a write itself";
  // Acknowledged means durable: all there after a power cut.
  service_.Detach(7);
  engine_.reset();
  device_->Crash(testing::MemoryDevice::CrashMode::kDropUnsynced);
  Reopen(options);
  for (int i = 0; i < kWrites; ++i) {
    std::string value;
    ASSERT_TRUE(region_->Get("s" + std::to_string(i), &value).ok()) << i;
    EXPECT_EQ(value, "synced");
  }
}

TEST_F(RegionServiceTest, APrimaryAnswersOnlyWhileItsLeaseHolds) {
  // No lease renewed yet: none enforced.
  ASSERT_EQ(Call(Make(wire::Opcode::kPut, "k", "before")).status,
            Status::Code::kOk);
  service_.RenewLease(60'000'000'000);
  EXPECT_TRUE(service_.LeaseHeld());
  ASSERT_EQ(Call(Make(wire::Opcode::kPut, "k", "held")).status,
            Status::Code::kOk);
  // Lapsed: writes are refused before they apply, reads after they read.
  service_.RenewLease(0);
  EXPECT_FALSE(service_.LeaseHeld());
  const wire::Reply refused = Call(Make(wire::Opcode::kPut, "k", "lapsed"));
  EXPECT_EQ(refused.status, Status::Code::kNotPrimary);
  EXPECT_NE(refused.message.find("lease"), std::string::npos);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "k")).status,
            Status::Code::kNotPrimary);
  wire::Request multi = Make(wire::Opcode::kMultiGet);
  multi.keys = {"k"};
  EXPECT_EQ(Call(multi).status, Status::Code::kNotPrimary);
  std::string value;
  ASSERT_TRUE(region_->Get("k", &value).ok());
  EXPECT_EQ(value, "held");  // the refused write was not applied
  // Renewed: answering again.
  service_.RenewLease(60'000'000'000);
  const wire::Reply got = Call(Make(wire::Opcode::kGet, "k"));
  EXPECT_EQ(got.status, Status::Code::kOk);
  EXPECT_EQ(got.value, "held");
}

// A server in a cluster requires a lease before it attaches anything: its
// primaries answer nothing -- no write applied, no read answered -- until
// the first renewal, so a primary whose first renewal failed is fenced, not
// free to serve.
TEST_F(RegionServiceTest, APrimaryWithoutItsFirstLeaseAnswersNothing) {
  RegionService fenced;
  fenced.RequireLease();
  ASSERT_TRUE(fenced.Attach(7, 3, region_).ok());
  EXPECT_FALSE(fenced.LeaseHeld());
  // The reply's message views the reply's bytes: both live in the caller.
  std::string reply_bytes;
  const auto call = [&](const wire::Request& request) {
    std::string bytes;
    wire::EncodeRequest(request, &bytes);
    reply_bytes.clear();
    fenced.Handle(nullptr, bytes, &reply_bytes);
    wire::Reply reply;
    EXPECT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
    return reply;
  };
  ASSERT_TRUE(region_->Put("k", "before").ok());
  const wire::Reply write = call(Make(wire::Opcode::kPut, "k", "unleased"));
  EXPECT_EQ(write.status, Status::Code::kNotPrimary);
  EXPECT_NE(write.message.find("lease"), std::string::npos);
  EXPECT_EQ(call(Make(wire::Opcode::kGet, "k")).status,
            Status::Code::kNotPrimary);
  std::string value;
  ASSERT_TRUE(region_->Get("k", &value).ok());
  EXPECT_EQ(value, "before");  // the refused write was not applied
  fenced.RenewLease(60'000'000'000);
  EXPECT_EQ(call(Make(wire::Opcode::kPut, "k", "leased")).status,
            Status::Code::kOk);
  fenced.Detach(7);
}

// A placement that asks for replicas (a minimum above one) on a primary
// with no backup is refused before it applies, never acknowledged as if it
// had none -- with replication enabled or not.
TEST_F(RegionServiceTest, AMinimumOfReplicasIsNeverBypassed) {
  Placement alone;
  alone.min_replicas = 2;
  ASSERT_TRUE(service_.Attach(7, 3, region_, alone).ok());
  const wire::Reply refused = Call(Make(wire::Opcode::kPut, "k", "v"));
  EXPECT_EQ(refused.status, Status::Code::kNotEnoughReplicas);
  std::string value;
  EXPECT_TRUE(region_->Get("k", &value).IsNotFound());
}

// A replication message sent to a client's door (no fabric session: the
// client TCP port) never reaches the replication path, whatever its bytes
// say.
TEST_F(RegionServiceTest, ReplicationMessagesAreRefusedOnAClientDoor) {
  Placement as_backup;
  as_backup.primary = false;
  as_backup.stream_key = std::string(32, 'k');
  ASSERT_TRUE(service_.Attach(7, 3, region_, as_backup).ok());
  std::string trim;
  replication::IndexControl control;
  control.type = replication::IndexControlType::kTrim;
  control.region_id = 7;
  control.epoch = 3;
  control.trimmed = {{log::LogKind::kLarge, 1, 0}};
  replication::EncodeIndexControl(control, &trim);
  std::string open;
  replication::Control opening{
      replication::ControlType::kOpen, 7, 3, 1, 0, 0, std::string()};
  opening.proof = replication::OpenProof(opening, std::string(32, 'k'), 0);
  replication::EncodeControl(opening, &open);
  for (const std::string& message : {trim, open}) {
    reply_bytes_.clear();
    service_.Handle(nullptr, message, &reply_bytes_);
    wire::Reply reply;
    ASSERT_TRUE(wire::DecodeReply(reply_bytes_, &reply).ok());
    EXPECT_EQ(reply.status, Status::Code::kInvalidArgument);
    EXPECT_NE(reply.message.find("client's connection"), std::string::npos)
        << reply.message;
  }
}

TEST_F(RegionServiceTest, RoutingErrorsAndMalformedRequestsGetTheirStatus) {
  wire::Request request = Make(wire::Opcode::kGet, "k");
  request.region_id = 8;
  EXPECT_EQ(Call(request).status, Status::Code::kWrongRegion);
  request.region_id = 7;
  request.epoch = 2;
  const wire::Reply stale = Call(request);
  EXPECT_EQ(stale.status, Status::Code::kStaleEpoch);
  EXPECT_NE(stale.message.find("epoch 3"), std::string_view::npos);
  service_.Detach(7);
  request.epoch = 3;
  EXPECT_EQ(Call(request).status, Status::Code::kWrongRegion);
  // Bytes that are no request at all.
  std::string reply;
  service_.Handle(nullptr, "not a request", &reply);
  wire::Reply decoded;
  ASSERT_TRUE(wire::DecodeReply(reply, &decoded).ok());
  EXPECT_EQ(decoded.status, Status::Code::kInvalidArgument);
}

TEST_F(RegionServiceTest, PlacementDecidesRoleAndKeyRange) {
  for (const char* key : {"a", "d", "g", "m", "q"}) {
    ASSERT_EQ(Call(Make(wire::Opcode::kPut, key, "v")).status,
              Status::Code::kOk);
  }
  // Held as primary of [d, m).
  Placement placement;
  placement.start = "d";
  placement.end = std::string("m");
  ASSERT_TRUE(service_.Attach(7, 3, region_, placement).ok());
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "g")).status, Status::Code::kOk);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "a")).status,
            Status::Code::kWrongRegion);
  EXPECT_EQ(Call(Make(wire::Opcode::kPut, "m", "v")).status,
            Status::Code::kWrongRegion);
  wire::Request multi = Make(wire::Opcode::kMultiGet);
  multi.keys = {"d", "q"};
  EXPECT_EQ(Call(multi).status, Status::Code::kWrongRegion);
  // A scan from the range's start (empty key) stops at its end.
  wire::Request scan = Make(wire::Opcode::kScan);
  scan.limit = 10;
  scan.max_bytes = 1 << 20;
  wire::Reply scanned = Call(scan);
  ASSERT_EQ(scanned.status, Status::Code::kOk);
  ASSERT_EQ(scanned.pairs.size(), 2u);
  EXPECT_EQ(scanned.pairs[0].first, "d");
  EXPECT_EQ(scanned.pairs[1].first, "g");
  EXPECT_FALSE(scanned.more);
  scan.key = "q";
  EXPECT_EQ(Call(scan).status, Status::Code::kWrongRegion);
  // Held as a backup: no client request is served.
  placement.primary = false;
  ASSERT_TRUE(service_.Attach(7, 3, region_, placement).ok());
  const wire::Reply backup = Call(Make(wire::Opcode::kGet, "g"));
  EXPECT_EQ(backup.status, Status::Code::kNotPrimary);
  EXPECT_NE(backup.message.find("backup"), std::string_view::npos);
}

// A BATCH is applied whole or not at all: a key outside the region refuses
// all of it (WRONG_REGION), one over its limits too (TOO_LARGE).
TEST_F(RegionServiceTest, ABatchIsAppliedWholeOrRefusedWhole) {
  Reopen(engine::EngineOptions{});  // writes that do not sync
  ASSERT_EQ(Call(Make(wire::Opcode::kPut, "g", "old")).status,
            Status::Code::kOk);
  Placement placement;
  placement.start = "d";
  placement.end = std::string("m");
  ASSERT_TRUE(service_.Attach(7, 3, region_, placement).ok());
  wire::Request batch = Make(wire::Opcode::kBatch);
  batch.writes = {{true, "e", "1"}, {false, "g", {}}, {true, "q", "2"}};
  EXPECT_EQ(Call(batch).status, Status::Code::kWrongRegion);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "e")).status,
            Status::Code::kNotFound);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "g")).value, "old");
  const std::string large(600 << 10, 'v');
  batch.writes = {{true, "e", large}, {true, "f", large}};
  const wire::Reply too_large = Call(batch);
  EXPECT_EQ(too_large.status, Status::Code::kTooLarge);
  EXPECT_NE(too_large.message.find("batch"), std::string_view::npos);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "e")).status,
            Status::Code::kNotFound);
  batch.writes = {{true, "e", "1"}, {false, "g", {}}, {true, "f", "2"}};
  EXPECT_EQ(Call(batch).status, Status::Code::kOk);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "e")).value, "1");
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "f")).value, "2");
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "g")).status,
            Status::Code::kNotFound);
  // On a shard it runs on the pool: it may start a log segment while it
  // holds the region's L0 lock.
  bool deferred = false;
  std::thread shard([&] {
    SetEndsTurns(true);
    EXPECT_EQ(CallAsAShard(batch, &deferred).status, Status::Code::kOk);
  });
  shard.join();
  EXPECT_TRUE(deferred) << "a batch ran on its shard";
}

// A SCAN_REVERSE reads its range from the top down, clipped to the region,
// in pages; its end must lie in the region.
TEST_F(RegionServiceTest, AReverseScanReadsDownwardWithinTheRegion) {
  for (const char* key : {"a", "d", "e", "g", "k", "m", "q"}) {
    ASSERT_EQ(
        Call(Make(wire::Opcode::kPut, key, std::string("v") + key)).status,
        Status::Code::kOk);
  }
  ASSERT_EQ(Call(Make(wire::Opcode::kDelete, "e")).status, Status::Code::kOk);
  Placement placement;
  placement.start = "d";
  placement.end = std::string("m");
  ASSERT_TRUE(service_.Attach(7, 3, region_, placement).ok());
  wire::Request scan = Make(wire::Opcode::kScanReverse);
  scan.end = std::string_view("m");
  scan.limit = 2;
  scan.max_bytes = 1 << 20;
  wire::Reply page = Call(scan);
  ASSERT_EQ(page.status, Status::Code::kOk);
  ASSERT_EQ(page.pairs.size(), 2u);
  EXPECT_EQ(page.pairs[0].first, "k");
  EXPECT_EQ(page.pairs[0].second, "vk");
  EXPECT_EQ(page.pairs[1].first, "g");
  EXPECT_TRUE(page.more);
  // The next page ends where this one did.
  scan.end = std::string_view("g");
  page = Call(scan);
  ASSERT_EQ(page.status, Status::Code::kOk);
  ASSERT_EQ(page.pairs.size(), 1u);
  EXPECT_EQ(page.pairs[0].first, "d");
  EXPECT_FALSE(page.more);
  // A lower bound inside the range.
  scan.end = std::string_view("m");
  scan.key = "h";
  scan.limit = 10;
  page = Call(scan);
  ASSERT_EQ(page.status, Status::Code::kOk);
  ASSERT_EQ(page.pairs.size(), 1u);
  EXPECT_EQ(page.pairs[0].first, "k");
  EXPECT_FALSE(page.more);
  // An end above the range, at or below its start, or none (the range has
  // an end): another region's.
  scan.key = {};
  for (const std::optional<std::string_view> end :
       {std::optional<std::string_view>("q"),
        std::optional<std::string_view>("d"),
        std::optional<std::string_view>()}) {
    scan.end = end;
    EXPECT_EQ(Call(scan).status, Status::Code::kWrongRegion);
  }
}

// Clients that scan (replies in parts, fetched) and leave with requests
// outstanding leave the server serving the next client.
TEST_F(RegionServiceTest, ScanningClientsThatLeaveDoNotStallTheNext) {
  for (int i = 0; i < 3000; ++i) {
    char key[16];
    std::snprintf(key, sizeof key, "s%05d", i);
    ASSERT_EQ(
        Call(Make(wire::Opcode::kPut, key, std::string(1100, 'v'))).status,
        Status::Code::kOk);
  }
  channel::ServerOptions server_options;
  std::unique_ptr<channel::Server> server;
  ASSERT_TRUE(channel::Server::Start(server_options, &service_, &server).ok());
  for (int round = 0; round < 6; ++round) {
    channel::ClientOptions client_options;
    client_options.request_buffer_bytes = 2u << 20;
    client_options.reply_buffer_bytes = 2u << 20;
    client_options.request_timeout = std::chrono::milliseconds(5000);
    std::unique_ptr<channel::Client> client;
    ASSERT_TRUE(channel::Client::Connect(client_options, "127.0.0.1",
                                         server->port(), &client)
                    .ok());
    // A put answers at once.
    std::string bytes, reply_bytes;
    wire::EncodeRequest(Make(wire::Opcode::kPut, "probe", "p"), &bytes);
    const Status called = client->Call(bytes, &reply_bytes);
    ASSERT_TRUE(called.ok()) << "round " << round << ": " << called.ToString();
    // Then scans, four at a time, left outstanding when the client goes.
    int answered = 0;
    for (int i = 0; i < 200; ++i) {
      char from[16];
      std::snprintf(from, sizeof from, "s%05d", (i * 37) % 2900);
      wire::Request scan = Make(wire::Opcode::kScan, from);
      scan.limit = 100;
      scan.max_bytes = 4u << 20;
      bytes.clear();
      wire::EncodeRequest(scan, &bytes);
      while (true) {
        const Status submitted =
            client->Submit(bytes, [&](Status status, std::string_view) {
              EXPECT_TRUE(status.ok()) << status.ToString();
              ++answered;
            });
        if (!submitted.IsBusy()) {
          ASSERT_TRUE(submitted.ok()) << submitted.ToString();
          break;
        }
        client->Poll();
      }
      if (client->outstanding() >= 4) client->Poll();
    }
    EXPECT_GT(answered, 0);
  }
  server.reset();
}

// The service behind the fabric transport: wire requests as message
// payloads, over shm.
TEST_F(RegionServiceTest, ServesWireRequestsOverTheFabricTransport) {
  channel::ServerOptions server_options;
  std::unique_ptr<channel::Server> server;
  ASSERT_TRUE(channel::Server::Start(server_options, &service_, &server).ok());
  channel::ClientOptions client_options;
  std::unique_ptr<channel::Client> client;
  ASSERT_TRUE(channel::Client::Connect(client_options, "127.0.0.1",
                                       server->port(), &client)
                  .ok());
  const std::string value(200000, 'v');  // a reply that comes in parts
  std::string bytes, reply_bytes;
  wire::EncodeRequest(Make(wire::Opcode::kPut, "big", value), &bytes);
  ASSERT_TRUE(client->Call(bytes, &reply_bytes).ok());
  bytes.clear();
  wire::EncodeRequest(Make(wire::Opcode::kGet, "big"), &bytes);
  ASSERT_TRUE(client->Call(bytes, &reply_bytes).ok());
  wire::Reply reply;
  ASSERT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
  EXPECT_EQ(reply.status, Status::Code::kOk);
  EXPECT_EQ(reply.value, value);
  client.reset();
  server.reset();
}

wire::Request CompareAndSet(std::string_view key,
                            std::optional<std::string_view> expected,
                            std::optional<std::string_view> replacement) {
  wire::Request request;
  request.opcode = wire::Opcode::kCompareAndSet;
  request.request_id = 98;
  request.region_id = 7;
  request.epoch = 3;
  request.key = key;
  request.expected = expected;
  request.replacement = replacement;
  return request;
}

wire::Request Increment(std::string_view key, int64_t delta) {
  wire::Request request;
  request.opcode = wire::Opcode::kIncrement;
  request.request_id = 97;
  request.region_id = 7;
  request.epoch = 3;
  request.key = key;
  request.delta = delta;
  return request;
}

TEST_F(RegionServiceTest, ACompareAndSetWritesOnlyWhatItExpectedIsThere) {
  // Put-if-absent: applied once, then it finds the value.
  wire::Reply first = Call(CompareAndSet("k", std::nullopt, "v1"));
  ASSERT_EQ(first.status, Status::Code::kOk);
  EXPECT_TRUE(first.applied);
  EXPECT_FALSE(first.current.has_value());
  wire::Reply again = Call(CompareAndSet("k", std::nullopt, "v9"));
  ASSERT_EQ(again.status, Status::Code::kOk);
  EXPECT_FALSE(again.applied);
  EXPECT_EQ(again.current.value_or("?"), "v1");

  // A wrong expectation writes nothing and says what is there.
  wire::Reply wrong = Call(CompareAndSet("k", "v0", "v2"));
  EXPECT_FALSE(wrong.applied);
  EXPECT_EQ(wrong.current.value_or("?"), "v1");
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "k")).value, "v1");

  wire::Reply swapped = Call(CompareAndSet("k", "v1", "v2"));
  EXPECT_TRUE(swapped.applied);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "k")).value, "v2");

  // Delete-if-equals.
  EXPECT_FALSE(Call(CompareAndSet("k", "v1", std::nullopt)).applied);
  EXPECT_TRUE(Call(CompareAndSet("k", "v2", std::nullopt)).applied);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "k")).status,
            Status::Code::kNotFound);
  wire::Reply gone = Call(CompareAndSet("k", "v2", "v3"));
  EXPECT_FALSE(gone.applied);
  EXPECT_FALSE(gone.current.has_value());
  // An empty value is a value, not none.
  EXPECT_TRUE(Call(CompareAndSet("e", std::nullopt, "")).applied);
  EXPECT_FALSE(Call(CompareAndSet("e", std::nullopt, "x")).applied);
  EXPECT_TRUE(Call(CompareAndSet("e", "", "x")).applied);
}

TEST_F(RegionServiceTest, AnIncrementAddsToAnEightByteCounter) {
  wire::Reply one = Call(Increment("c", 5));
  ASSERT_EQ(one.status, Status::Code::kOk);
  EXPECT_EQ(one.counter, 5);
  EXPECT_EQ(Call(Increment("c", -7)).counter, -2);
  wire::Reply stored = Call(Make(wire::Opcode::kGet, "c"));
  ASSERT_EQ(stored.value.size(), 8u);

  // Not a counter, or past 64 bits: refused, nothing written.
  ASSERT_EQ(Call(Make(wire::Opcode::kPut, "text", "hello")).status,
            Status::Code::kOk);
  wire::Reply text = Call(Increment("text", 1));
  EXPECT_EQ(text.status, Status::Code::kInvalidArgument);
  EXPECT_NE(std::string(text.message).find("not an 8-byte counter"),
            std::string::npos);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "text")).value, "hello");
  ASSERT_EQ(Call(Increment("big", INT64_MAX)).counter, INT64_MAX);
  EXPECT_EQ(Call(Increment("big", 1)).status, Status::Code::kInvalidArgument);
  EXPECT_EQ(Call(Increment("big", 0)).counter, INT64_MAX);
}

TEST_F(RegionServiceTest, ConcurrentIncrementsAndPutsLoseNoIncrement) {
  // Increments race each other and plain puts of other keys of the same
  // stripes: every increment counts once.
  constexpr int kThreads = 4;
  constexpr int kEach = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kEach; ++i) {
        std::string bytes, reply;
        wire::EncodeRequest(Increment("counter", 1), &bytes);
        service_.Handle(nullptr, bytes, &reply);
        wire::Reply decoded;
        ASSERT_TRUE(wire::DecodeReply(reply, &decoded).ok());
        ASSERT_EQ(decoded.status, Status::Code::kOk);
        const std::string key =
            "p" + std::to_string(t) + "-" + std::to_string(i % 10);
        bytes.clear();
        reply.clear();
        wire::EncodeRequest(Make(wire::Opcode::kPut, key, "x"), &bytes);
        service_.Handle(nullptr, bytes, &reply);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(Call(Increment("counter", 0)).counter, kThreads * kEach);
}

// A shard decides a conditional write itself when its read finds the key
// in memory; one whose read needs the device writes nothing there and runs
// on the pool (its read happens in the region's write order).
TEST_F(RegionServiceTest, AConditionalWriteLeavesItsShardOnlyForTheDevice) {
  const std::string value(8000, 'v');  // large: in the large log
  for (int i = 0; i < 300; ++i) {      // ~2.4 MB: most of it on the device
    ASSERT_EQ(
        Call(Make(wire::Opcode::kPut, "k" + std::to_string(i), value)).status,
        Status::Code::kOk);
  }
  Reopen(engine::EngineOptions{});  // nothing cached; writes that do not sync
  std::thread shard([&] {
    SetEndsTurns(true);
    bool deferred = false;
    wire::Reply reply =
        CallAsAShard(CompareAndSet("k3", value, "small"), &deferred);
    EXPECT_TRUE(reply.applied) << reply.message;
    EXPECT_TRUE(deferred) << "its read needed the device, yet on the shard";
    reply = CallAsAShard(CompareAndSet("k3", "small", "smaller"), &deferred);
    EXPECT_TRUE(reply.applied);
    EXPECT_FALSE(deferred) << "its key in memory, yet deferred";
    reply = CallAsAShard(Increment("n", 2), &deferred);
    EXPECT_EQ(reply.counter, 2);
    EXPECT_FALSE(deferred);
  });
  shard.join();
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, "k3")).value, "smaller");
}

}  // namespace
}  // namespace kvs::service
