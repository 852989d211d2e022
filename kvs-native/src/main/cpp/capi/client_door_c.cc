// The client-door part of the C ABI (include/kvs/kvs.h): adapts C types to
// door::ClientDoor with the service's RegionService.

#include <chrono>
#include <memory>
#include <string>

#include "capi/last_error.h"
#include "capi/service_handle.h"
#include "door/client_door.h"
#include "kvs/kvs.h"

struct kvs_client_door {
  std::unique_ptr<kvs::door::ClientDoor> door;
};

namespace {

// A C string that may be null, as a string (empty if null).
std::string Text(const char* text) { return text != nullptr ? text : ""; }

}  // namespace

kvs_status kvs_client_door_start(const kvs_client_door_options* options,
                                 kvs_service* service, kvs_client_door** door) {
  kvs::door::ClientDoorOptions door_options;
  door_options.host = Text(options->host);
  door_options.port = options->port;
  door_options.shards = options->shards;
  door_options.max_connections = options->max_connections;
  door_options.max_in_flight = options->max_in_flight;
  door_options.max_frame_bytes = options->max_frame_bytes;
  if (options->client_secret_size > 0) {
    door_options.client_secret =
        std::string(static_cast<const char*>(options->client_secret),
                    options->client_secret_size);
  }
  if (options->handshake_timeout_ms > 0) {
    door_options.handshake_timeout =
        std::chrono::milliseconds(options->handshake_timeout_ms);
  }
  if (options->tls_certificate_path != nullptr) {
    door_options.tls.certificate_path = options->tls_certificate_path;
    door_options.tls.private_key_path = Text(options->tls_private_key_path);
    door_options.tls.trusted_ca_path = Text(options->tls_trusted_ca_path);
    door_options.tls.require_client_auth =
        options->tls_require_client_auth != 0;
  }
  auto started = std::make_unique<kvs_client_door>();
  const kvs::Status status = kvs::door::ClientDoor::Start(
      &service->service, door_options, &started->door);
  if (!status.ok()) return kvs::capi::Report(status);
  *door = started.release();
  return KVS_OK;
}

uint16_t kvs_client_door_port(const kvs_client_door* door) {
  return door->door->port();
}

void kvs_client_door_stats_get(const kvs_client_door* door,
                               kvs_client_door_stats* stats) {
  const kvs::door::ClientDoorStats got = door->door->stats();
  stats->requests = got.requests;
  stats->connections = got.connections;
  stats->refused_connections = got.refused_connections;
  stats->refusals = got.refusals;
  stats->output_stalls = got.output_stalls;
  stats->malformed = got.malformed;
  stats->shard_turns = got.shard_turns;
  stats->shard_wakeups = got.shard_wakeups;
}

size_t kvs_client_door_probe(kvs_client_door* door, uint8_t* answered,
                             size_t capacity) {
  const std::vector<bool> probed = door->door->Probe();
  for (size_t i = 0; i < probed.size() && i < capacity; ++i) {
    answered[i] = probed[i] ? 1 : 0;
  }
  return probed.size();
}

void kvs_client_door_stop(kvs_client_door* door) { delete door; }
