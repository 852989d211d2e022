// Test fixture of the Send-Index tests: two nodes (a primary's and a
// backup's), each an engine on an in-memory device with region "r7", a
// region service and its own fabric server (the test's provider).

#ifndef KVS_REPLICATION_SEND_INDEX_NODES_H_
#define KVS_REPLICATION_SEND_INDEX_NODES_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "channel/server.h"
#include "engine/engine.h"
#include "fabric/endpoint.h"
#include "service/region_service.h"
#include "testing/memory_device.h"

namespace kvs::replication::index_test {

// Every member of a group gets the same stream key (the master's).
inline const std::string kSendIndexStreamKey(32, 'k');

struct Node {
  std::shared_ptr<testing::MemoryDevice> device;
  std::unique_ptr<engine::Engine> engine;
  lsm::Region* region = nullptr;
  service::RegionService service;
  std::unique_ptr<channel::Server> server;
};

class SendIndexNodes : public ::testing::TestWithParam<fabric::Provider> {
 protected:
  void SetUp() override {
    StartNode(&primary_);
    StartNode(&backup_);
  }

  void TearDown() override {
    primary_.service.DisableReplication();
    backup_.service.DisableReplication();
  }

  fabric::EndpointOptions Endpoint() const {
    fabric::EndpointOptions endpoint;
    endpoint.provider = GetParam();
    if (GetParam() == fabric::Provider::kTcp) endpoint.node = "127.0.0.1";
    return endpoint;
  }

  engine::EngineOptions Options() const {
    engine::EngineOptions options;
    options.flush_interval_ms = flush_interval_ms_;
    options.volume.grow_step_segments = 4;
    options.region.l0_size_bytes = 1 << 20;
    // Several levels, kept: upper ones keep medium values in the medium
    // log, so pointers go through both log copies.
    options.region.growth_factor = 2;
    options.region.stale_fraction_max = 1.0;
    return options;
  }

  void StartNode(Node* node) {
    node->device = testing::MemoryDevice::Create(1024u << 20);
    ASSERT_TRUE(engine::Engine::Open(node->device->Open(), Options(), true,
                                     &node->engine)
                    .ok());
    ASSERT_TRUE(node->engine->CreateRegion("r7", &node->region).ok());
    node->service.UseEngine(node->engine.get());
    StartServer(node);
  }

  void StartServer(Node* node) {
    channel::ServerOptions server_options;
    server_options.endpoint = Endpoint();
    ASSERT_TRUE(
        channel::Server::Start(server_options, &node->service, &node->server)
            .ok());
    node->service.EnableReplication(Endpoint());
  }

  // How long a write may stay in a log's buffer (a test of what reaches
  // the device raises it, so that no flush comes in between).
  uint32_t flush_interval_ms_ = 50;
  Node primary_, backup_;
};

}  // namespace kvs::replication::index_test

#endif  // KVS_REPLICATION_SEND_INDEX_NODES_H_
