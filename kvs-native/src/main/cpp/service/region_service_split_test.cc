// RegionService across a split or merge: requests held while a region is
// sealed, and those addressed to it redirected to the successors that
// took it over (RegionService::DetachSealed, TakeOver).

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "service/held_requests.h"
#include "service/region_service.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::service {
namespace {

using std::chrono::milliseconds;

class RegionServiceSplitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::EngineOptions options;
    options.volume.grow_step_segments = 4;
    device_ = testing::MemoryDevice::Create(256u << 20);
    ASSERT_TRUE(
        engine::Engine::Open(device_->Open(), options, true, &engine_).ok());
    ASSERT_TRUE(engine_->CreateRegion("r7", &parent_).ok());
    ASSERT_TRUE(engine_->CreateRegion("r8", &lower_).ok());
    ASSERT_TRUE(engine_->CreateRegion("r9", &upper_).ok());
    ASSERT_TRUE(service_.Attach(7, 3, parent_).ok());
  }

  // Attaches the daughters 8 ["", m) and 9 [m, +inf) at epoch 4, `primary`
  // or as backups, each taking over region 7 as it is attached.
  void AttachDaughters(bool primary) {
    Placement lower;
    lower.primary = primary;
    lower.end = std::string("m");
    Placement upper;
    upper.primary = primary;
    upper.start = "m";
    ASSERT_TRUE(service_.Attach(8, 4, lower_, lower).ok());
    service_.TakeOver(8, {7});
    ASSERT_TRUE(service_.Attach(9, 4, upper_, upper).ok());
    service_.TakeOver(9, {7});
  }

  // Sends `request` and returns the future of its decoded reply.
  std::future<wire::Reply> Send(const wire::Request& request) {
    auto answer = std::make_shared<std::promise<wire::Reply>>();
    std::future<wire::Reply> future = answer->get_future();
    std::string bytes;
    wire::EncodeRequest(request, &bytes);
    service_.HandleAsync(nullptr, bytes, [answer](std::string reply_bytes) {
      wire::Reply reply;
      EXPECT_TRUE(wire::DecodeReply(reply_bytes, &reply).ok());
      // The reply's views point into reply_bytes: keep what the tests read.
      wire::Reply kept;
      kept.status = reply.status;
      kept.request_id = reply.request_id;
      answer->set_value(kept);
    });
    return future;
  }

  wire::Reply Call(const wire::Request& request) { return Send(request).get(); }

  static wire::Request Make(wire::Opcode opcode, uint64_t region_id,
                            uint64_t epoch, std::string_view key,
                            std::string_view value = {}) {
    wire::Request request;
    request.opcode = opcode;
    request.request_id = 5;
    request.region_id = region_id;
    request.epoch = epoch;
    request.key = key;
    request.value = value;
    return request;
  }

  static bool Ready(const std::future<wire::Reply>& reply) {
    return reply.wait_for(milliseconds(0)) == std::future_status::ready;
  }

  std::shared_ptr<testing::MemoryDevice> device_;
  std::unique_ptr<engine::Engine> engine_;
  lsm::Region* parent_ = nullptr;
  lsm::Region* lower_ = nullptr;
  lsm::Region* upper_ = nullptr;
  RegionService service_;
};

TEST_F(RegionServiceSplitTest,
       ARequestForASplitRegionRunsInTheDaughterOfItsKey) {
  ASSERT_TRUE(service_.DetachSealed(7, milliseconds(500)).ok());
  AttachDaughters(/*primary=*/true);
  // Addressed to the parent at its epoch, as a client whose map still
  // names it: applied in the daughter that holds the key.
  EXPECT_EQ(Call(Make(wire::Opcode::kPut, 7, 3, "c", "low")).status,
            Status::Code::kOk);
  EXPECT_EQ(Call(Make(wire::Opcode::kPut, 7, 3, "x", "high")).status,
            Status::Code::kOk);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, 8, 4, "c")).status,
            Status::Code::kOk);
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, 9, 4, "x")).status,
            Status::Code::kOk);
  std::string value;
  EXPECT_TRUE(lower_->Get("c", &value).ok());
  EXPECT_EQ(value, "low");
  EXPECT_TRUE(upper_->Get("c", &value).IsNotFound());
  EXPECT_EQ(Call(Make(wire::Opcode::kDelete, 7, 3, "x")).status,
            Status::Code::kOk);
  EXPECT_TRUE(upper_->Get("x", &value).IsNotFound());
  // A multi-get within one daughter runs there; across both it is refused,
  // as is a scan (its client must learn where each daughter ends).
  wire::Request multi = Make(wire::Opcode::kMultiGet, 7, 3, "");
  multi.keys = {"a", "c"};
  EXPECT_EQ(Call(multi).status, Status::Code::kOk);
  multi.keys = {"c", "x"};
  EXPECT_EQ(Call(multi).status, Status::Code::kWrongRegion);
  wire::Request scan = Make(wire::Opcode::kScan, 7, 3, "c");
  scan.limit = 10;
  scan.max_bytes = 1 << 20;
  EXPECT_EQ(Call(scan).status, Status::Code::kWrongRegion);
}

TEST_F(RegionServiceSplitTest, ADaughterHeldAsABackupOrGoneTakesNothing) {
  ASSERT_TRUE(service_.DetachSealed(7, milliseconds(500)).ok());
  AttachDaughters(/*primary=*/false);
  const wire::Reply backup = Call(Make(wire::Opcode::kPut, 7, 3, "c", "v"));
  EXPECT_EQ(backup.status, Status::Code::kWrongRegion);
  std::string value;
  EXPECT_TRUE(lower_->Get("c", &value).IsNotFound());
  // Led here, then gone (moved elsewhere): refused again.
  AttachDaughters(/*primary=*/true);
  EXPECT_EQ(Call(Make(wire::Opcode::kPut, 7, 3, "c", "v")).status,
            Status::Code::kOk);
  service_.Detach(8);
  EXPECT_EQ(Call(Make(wire::Opcode::kPut, 7, 3, "c", "v")).status,
            Status::Code::kWrongRegion);
}

TEST_F(RegionServiceSplitTest,
       RequestsThatReachASealedRegionWaitForItsDaughters) {
  ASSERT_TRUE(service_.DetachSealed(7, milliseconds(500)).ok());
  std::future<wire::Reply> put = Send(Make(wire::Opcode::kPut, 7, 3, "c", "v"));
  std::future<wire::Reply> get = Send(Make(wire::Opcode::kGet, 7, 3, "x"));
  // Held: neither answered while the split is not done.
  EXPECT_FALSE(Ready(put));
  EXPECT_FALSE(Ready(get));
  AttachDaughters(/*primary=*/true);
  EXPECT_EQ(put.get().status, Status::Code::kOk);
  EXPECT_EQ(get.get().status, Status::Code::kNotFound);  // served by 9
  std::string value;
  EXPECT_TRUE(lower_->Get("c", &value).ok());
}

TEST_F(RegionServiceSplitTest, AHeldRequestWaitsForTheDaughterOfItsKey) {
  ASSERT_TRUE(service_.DetachSealed(7, milliseconds(500)).ok());
  std::future<wire::Reply> low = Send(Make(wire::Opcode::kPut, 7, 3, "c", "v"));
  std::future<wire::Reply> high =
      Send(Make(wire::Opcode::kPut, 7, 3, "x", "v"));
  ASSERT_EQ(service_.held_requests(), 2u);
  Placement lower;
  lower.end = std::string("m");
  ASSERT_TRUE(service_.Attach(8, 4, lower_, lower).ok());
  service_.TakeOver(8, {7});
  // The lower daughter serves its key; the other key is held again.
  EXPECT_EQ(low.get().status, Status::Code::kOk);
  while (service_.held_requests() != 1) std::this_thread::yield();
  EXPECT_FALSE(Ready(high));
  Placement upper;
  upper.start = "m";
  ASSERT_TRUE(service_.Attach(9, 4, upper_, upper).ok());
  service_.TakeOver(9, {7});
  EXPECT_EQ(high.get().status, Status::Code::kOk);
  std::string value;
  EXPECT_TRUE(upper_->Get("x", &value).ok());
}

TEST_F(RegionServiceSplitTest, ASealedRegionAttachedAgainRunsWhatItHeld) {
  ASSERT_TRUE(service_.DetachSealed(7, milliseconds(500)).ok());
  std::future<wire::Reply> put = Send(Make(wire::Opcode::kPut, 7, 3, "c", "v"));
  EXPECT_FALSE(Ready(put));
  // The split failed: the master opens the parent again.
  ASSERT_TRUE(service_.Attach(7, 3, parent_).ok());
  EXPECT_EQ(put.get().status, Status::Code::kOk);
  std::string value;
  EXPECT_TRUE(parent_->Get("c", &value).ok());
}

TEST_F(RegionServiceSplitTest, AHoldThatEndsRefusesWhatItHeld) {
  const auto sealed = std::chrono::steady_clock::now();
  ASSERT_TRUE(service_.DetachSealed(7, milliseconds(50)).ok());
  std::future<wire::Reply> put = Send(Make(wire::Opcode::kPut, 7, 3, "c", "v"));
  EXPECT_EQ(put.get().status, Status::Code::kWrongRegion);
  EXPECT_GE(std::chrono::steady_clock::now() - sealed, milliseconds(50));
  std::string value;
  EXPECT_TRUE(parent_->Get("c", &value).IsNotFound());
  // After the hold, a request is refused at once.
  EXPECT_EQ(Call(Make(wire::Opcode::kGet, 7, 3, "c")).status,
            Status::Code::kWrongRegion);
}

TEST(HeldRequestsTest, HoldsAtMostItsBoundAndRunsEveryOneOnce) {
  std::atomic<size_t> reran{0};
  HeldRequests held([&reran](std::string, HeldRequests::Respond respond) {
    reran.fetch_add(1);
    respond(std::string());
  });
  held.Hold(7, std::chrono::steady_clock::now() + std::chrono::seconds(60));
  wire::Request request;
  request.opcode = wire::Opcode::kGet;
  request.region_id = 7;
  request.key = "k";
  std::atomic<size_t> answered{0};
  size_t parked = 0;
  for (size_t i = 0; i < limits::held_requests_max + 10; ++i) {
    HeldRequests::Respond respond = [&answered](std::string) {
      answered.fetch_add(1);
    };
    if (held.Park(request, &respond)) ++parked;
  }
  EXPECT_EQ(parked, limits::held_requests_max);
  EXPECT_EQ(held.held(), limits::held_requests_max);
  request.region_id = 8;  // not held
  HeldRequests::Respond other = [](std::string) {};
  EXPECT_FALSE(held.Park(request, &other));
  held.Release(7);
  EXPECT_EQ(reran.load(), limits::held_requests_max);
  EXPECT_EQ(answered.load(), limits::held_requests_max);
  EXPECT_EQ(held.held(), 0u);
  held.Release(7);  // nothing left
  EXPECT_EQ(reran.load(), limits::held_requests_max);
}

}  // namespace
}  // namespace kvs::service
