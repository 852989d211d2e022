// Test fixture of the replication tests: two region services, each behind
// its own fabric server (shm or tcp, the test's parameter), a primary and a
// backup of region 7 ("r7") on in-memory devices.

#ifndef KVS_REPLICATION_REPLICATION_TEST_FIXTURE_H_
#define KVS_REPLICATION_REPLICATION_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "channel/client.h"
#include "channel/server.h"
#include "engine/engine.h"
#include "fabric/endpoint.h"
#include "replication/contents_digest.h"
#include "replication/replication_format.h"
#include "service/region_service.h"
#include "testing/memory_device.h"

namespace kvs::replication::test {

// Every member of a group gets the same stream key (the master's).
inline const std::string kStreamKey(32, 'k');

// What a node's fabric server hands requests to: its service, except that a
// test may hold build-index FLUSH messages back (as a slow backup would take
// them late) until it lets them go.
class Holding : public channel::RequestHandler {
 public:
  explicit Holding(service::RegionService* service) : service_(service) {}

  void Hold() {
    std::lock_guard<std::mutex> lock(mutex_);
    holding_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    holding_ = false;
    released_.notify_all();
  }
  // Waits until a FLUSH is being held; false if none was within 60 s (the
  // writes that would send one failed).
  bool AwaitHeld() {
    std::unique_lock<std::mutex> lock(mutex_);
    return released_.wait_for(lock, std::chrono::seconds(60),
                              [&] { return held_ > 0; });
  }

  void Handle(channel::Session* session, std::string_view request,
              std::string* reply) override {
    service_->Handle(session, request, reply);
  }
  void HandleAsync(channel::Session* session, std::string_view request,
                   Respond respond) override {
    Control control;
    if (IsControl(request) && DecodeControl(request, &control).ok() &&
        control.type == ControlType::kFlush) {
      // Blocks this (the control) worker: the session stays valid.
      std::unique_lock<std::mutex> lock(mutex_);
      if (holding_) {
        ++held_;
        released_.notify_all();
        released_.wait(lock, [&] { return !holding_; });
      }
    }
    service_->HandleAsync(session, request, std::move(respond));
  }
  bool IsControl(std::string_view request) const override {
    return service_->IsControl(request);
  }

 private:
  service::RegionService* const service_;
  std::mutex mutex_;
  std::condition_variable released_;
  bool holding_ = false;
  int held_ = 0;
};

struct Node {
  std::shared_ptr<testing::MemoryDevice> device;
  std::unique_ptr<engine::Engine> engine;
  lsm::Region* region = nullptr;
  service::RegionService service;
  Holding handler{&service};
  std::unique_ptr<channel::Server> server;
};

class ReplicationTest : public ::testing::TestWithParam<fabric::Provider> {
 protected:
  void SetUp() override {
    StartNode(&primary_);
    StartNode(&backup_);
  }

  fabric::EndpointOptions Endpoint() const {
    fabric::EndpointOptions endpoint;
    endpoint.provider = GetParam();
    if (GetParam() == fabric::Provider::kTcp) endpoint.node = "127.0.0.1";
    return endpoint;
  }

  engine::EngineOptions EngineOptions() const {
    engine::EngineOptions options;
    options.volume.grow_step_segments = 4;
    options.region.l0_size_bytes = 1 << 20;
    options.flush_interval_ms = flush_interval_ms_;
    return options;
  }

  void StartNode(Node* node) {
    node->device = testing::MemoryDevice::Create(512u << 20);
    ASSERT_TRUE(engine::Engine::Open(node->device->Open(), EngineOptions(),
                                     true, &node->engine)
                    .ok());
    ASSERT_TRUE(node->engine->CreateRegion("r7", &node->region).ok());
    channel::ServerOptions server_options;
    server_options.endpoint = Endpoint();
    ASSERT_TRUE(
        channel::Server::Start(server_options, &node->handler, &node->server)
            .ok());
    // Short: a write whose backup cannot take it waits this long for the
    // group to change before it fails.
    node->service.EnableReplication(Endpoint(), std::chrono::seconds(2));
  }

  void Place(uint64_t primary_epoch, uint64_t backup_epoch) {
    service::Placement as_backup;
    as_backup.stream_key = kStreamKey;
    as_backup.primary = false;
    ASSERT_TRUE(
        backup_.service.Attach(7, backup_epoch, backup_.region, as_backup)
            .ok());
    service::Placement as_primary;
    as_primary.stream_key = kStreamKey;
    as_primary.backups.push_back(
        {"127.0.0.1", static_cast<uint16_t>(backup_.server->port())});
    ASSERT_TRUE(
        primary_.service.Attach(7, primary_epoch, primary_.region, as_primary)
            .ok());
  }

  wire::Reply Call(const wire::Request& request) {
    std::string bytes;
    wire::EncodeRequest(request, &bytes);
    reply_.clear();
    primary_.service.Handle(nullptr, bytes, &reply_);
    wire::Reply reply;
    EXPECT_TRUE(wire::DecodeReply(reply_, &reply).ok());
    return reply;
  }

  static wire::Request Make(wire::Opcode opcode, uint64_t epoch,
                            std::string_view key, std::string_view value = {}) {
    wire::Request request;
    request.opcode = opcode;
    request.region_id = 7;
    request.epoch = epoch;
    request.key = key;
    request.value = value;
    return request;
  }

  static std::string ValueFor(int i) {
    return std::string(static_cast<size_t>(i % 7 == 0 ? 3000 : 100 + i % 300),
                       static_cast<char>('a' + i % 26));
  }

  void TearDown() override {
    // Services first (they close streams and buffers), then servers.
    primary_.service.DisableReplication();
    backup_.service.DisableReplication();
  }

  // Kills the primary's process (kill -9: what its engine had not written
  // to its device is gone; what it wrote stays), then opens its engine and
  // region 7 again, attached to nothing.
  void KillAndReopenPrimary() {
    primary_.device->Crash(testing::MemoryDevice::CrashMode::kProcessKill);
    primary_.service.Detach(7);
    primary_.region = nullptr;
    primary_.engine.reset();
    ASSERT_TRUE(engine::Engine::Open(primary_.device->Open(), EngineOptions(),
                                     false, &primary_.engine)
                    .ok());
    ASSERT_TRUE(primary_.engine->OpenRegion("r7", &primary_.region).ok());
  }

  // The engines' flush interval: how long a write may stay in a log's
  // buffer (the engine's default; a test of what reaches the device raises
  // it so that no flush comes in between).
  uint32_t flush_interval_ms_ = 50;
  Node primary_, backup_;
  std::string reply_;
};

}  // namespace kvs::replication::test

#endif  // KVS_REPLICATION_REPLICATION_TEST_FIXTURE_H_
