// The fabric part of the C ABI (include/kvs/kvs.h): adapts C types to
// channel::Server (with a RegionService) and channel::Client.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "capi/engine_handle.h"
#include "capi/last_error.h"
#include "capi/service_handle.h"
#include "channel/client.h"
#include "channel/server.h"
#include "kvs/kvs.h"
#include "service/region_service.h"
#include "util/limits.h"

struct kvs_fabric_server {
  kvs_service* service = nullptr;
  std::unique_ptr<kvs::channel::Server> server;
  // Replication needs the server's buffers: it stops before the server.
  ~kvs_fabric_server() {
    if (service != nullptr) service->service.DisableReplication();
  }
};

struct kvs_fabric_client {
  struct Finished {
    uint64_t tag;
    kvs_status status;
    std::string bytes;
  };
  std::unique_ptr<kvs::channel::Client> client;
  std::vector<Finished> finished;
};

namespace {

using kvs::Status;
using kvs::capi::Report;

Status Endpoint(const kvs_fabric_options& c,
                kvs::fabric::EndpointOptions* options) {
  if (c.provider == nullptr ||
      !kvs::fabric::ParseProvider(c.provider, &options->provider)) {
    return Status::InvalidArgument(std::string("unknown fabric provider '") +
                                   (c.provider != nullptr ? c.provider : "") +
                                   "' (shm, tcp or verbs)");
  }
  options->node = c.node != nullptr ? c.node : "";
  return Status::Ok();
}

std::string Bytes(const void* bytes, size_t size) {
  return bytes != nullptr && size > 0
             ? std::string(static_cast<const char*>(bytes), size)
             : std::string();
}

std::string Secret(const kvs_fabric_options& options) {
  return Bytes(options.secret, options.secret_bytes);
}

std::string ClientSecret(const kvs_fabric_options& options) {
  return Bytes(options.client_secret, options.client_secret_bytes);
}

}  // namespace

extern "C" {

void kvs_fabric_options_init(kvs_fabric_options* options) {
  options->provider = "shm";
  options->node = "";
  options->host = "127.0.0.1";
  options->port = 0;
  options->workers = 2;
  options->buffer_bytes = 256u << 10;
  options->timeout_ms = 5000;
  options->secret = nullptr;
  options->secret_bytes = 0;
  options->client_secret = nullptr;
  options->client_secret_bytes = 0;
}

kvs_service* kvs_service_create(void) { return new kvs_service(); }

void kvs_service_use_engine(kvs_service* service, kvs_engine* engine) {
  service->service.UseEngine(engine->engine.get());
}

void kvs_service_replication_stats(const kvs_service* service,
                                   kvs_replication_stats* stats) {
  const kvs::replication::ReplicatorStats sent =
      service->service.ReplicationStats();
  const kvs::replication::SendIndexSinkStats held =
      service->service.BackupStats();
  stats->log_bytes = sent.bytes;
  stats->index_bytes = sent.index_bytes;
  stats->writes = sent.writes;
  stats->flushes = sent.flushes;
  stats->index_messages = sent.index_messages;
  stats->index_cpu_ns = sent.index_cpu_ns;
  stats->backup_tail_bytes = held.tail_bytes;
  stats->backup_segments = held.segments;
  stats->backup_levels = held.levels;
  stats->backup_log_cpu_ns = held.log_cpu_ns;
  stats->backup_index_cpu_ns = held.index_cpu_ns;
  stats->insert_cpu_ns = service->service.InsertCpuNanos();
  stats->batches = sent.batches;
  stats->stream_failures = sent.stream_failures;
}

size_t kvs_service_request_stats(const kvs_service* service, uint64_t* values,
                                 size_t capacity) {
  std::vector<uint64_t> snapshot;
  service->service.request_metrics().Snapshot(&snapshot);
  if (capacity < snapshot.size()) return 0;
  std::copy(snapshot.begin(), snapshot.end(), values);
  return snapshot.size();
}

void kvs_service_set_request_metrics(kvs_service* service, int enabled) {
  service->service.request_metrics().SetEnabled(enabled != 0);
}

void kvs_service_attach(kvs_service* service, uint64_t region_id,
                        uint64_t epoch, kvs_region* region) {
  // A primary placement: never refused.
  (void)service->service.Attach(region_id, epoch,
                                reinterpret_cast<kvs::lsm::Region*>(region));
}

kvs_status kvs_service_attach_placed(kvs_service* service, uint64_t region_id,
                                     uint64_t epoch, kvs_region* region,
                                     const kvs_placement* placed) {
  kvs::service::Placement placement;
  placement.primary = placed->primary != 0;
  placement.mode = placed->mode == KVS_REPLICATION_SEND_INDEX
                       ? kvs::replication::ReplicationMode::kSendIndex
                       : kvs::replication::ReplicationMode::kBuildIndex;
  for (size_t i = 0; i < placed->backup_count; ++i) {
    const kvs_backup& backup = placed->backups[i];
    placement.backups.push_back(
        {backup.host, backup.port, backup.joining != 0});
  }
  placement.start.assign(static_cast<const char*>(placed->start),
                         placed->start_size);
  if (placed->has_end != 0) {
    placement.end.emplace(static_cast<const char*>(placed->end),
                          placed->end_size);
  }
  placement.min_replicas = std::max<size_t>(1, placed->min_replicas);
  placement.joining = placed->joining != 0;
  placement.replicated = placed->replicated != 0;
  if (placed->primary_server != nullptr) {
    placement.primary_server.assign(placed->primary_server,
                                    placed->primary_server_size);
  }
  placement.stream_key = Bytes(placed->stream_key, placed->stream_key_size);
  return Report(service->service.Attach(
      region_id, epoch, reinterpret_cast<kvs::lsm::Region*>(region),
      std::move(placement)));
}

kvs_status kvs_service_replica_digest(const kvs_service* service,
                                      uint64_t region_id,
                                      kvs_contents_digest* digest) {
  kvs::replication::ContentsDigest d;
  const Status status = service->service.ReplicaDigest(region_id, &d);
  if (!status.ok()) return Report(status);
  *digest = {d.digest,      d.pairs,   d.level_pairs, d.levels,
             d.past_levels, d.dropped, d.last_lsn,    d.compacted_lsn};
  return KVS_OK;
}

kvs_status kvs_service_promote(kvs_service* service, uint64_t region_id,
                               const char* name, size_t name_size,
                               const void* start, size_t start_size,
                               const void* end, size_t end_size, int has_end,
                               kvs_promotion_report* report) {
  kvs::lsm::Region* region = nullptr;
  kvs::service::PromotionReport promotion;
  kvs::lsm::KeyBounds bounds{
      std::string(static_cast<const char*>(start), start_size), std::nullopt};
  if (has_end != 0) {
    bounds.upper = std::string(static_cast<const char*>(end), end_size);
  }
  const Status status = service->service.PromoteBackup(
      region_id, std::string_view(name, name_size), bounds, &region,
      &promotion);
  if (!status.ok()) return Report(status);
  *report = {promotion.adoption.segments, promotion.drain_us,
             promotion.close_us, promotion.adopt_us, promotion.open_us};
  return KVS_OK;
}

int kvs_service_backups_caught_up(const kvs_service* service,
                                  uint64_t region_id) {
  return service->service.BackupsCaughtUp(region_id);
}

size_t kvs_service_backup_states(const kvs_service* service, uint64_t region_id,
                                 int8_t* states, size_t capacity) {
  const std::vector<kvs::replication::BackupState> held =
      service->service.BackupStates(region_id);
  for (size_t i = 0; i < held.size() && i < capacity; ++i) {
    states[i] = static_cast<int8_t>(held[i]);
  }
  return held.size();
}

size_t kvs_service_backup_lags(const kvs_service* service, uint64_t region_id,
                               kvs_backup_lag* lags, size_t capacity) {
  const std::vector<kvs::replication::BackupLag> behind =
      service->service.BackupLags(region_id);
  for (size_t i = 0; i < behind.size() && i < capacity; ++i) {
    lags[i] = {behind[i].queued_bytes, behind[i].writes,
               static_cast<uint64_t>(behind[i].oldest_wait.count())};
  }
  return behind.size();
}

size_t kvs_service_backup_failure(const kvs_service* service,
                                  uint64_t region_id, size_t index,
                                  char* message, size_t capacity) {
  const std::vector<std::string> failures =
      service->service.BackupFailures(region_id);
  if (index >= failures.size()) return 0;
  const std::string& failure = failures[index];
  std::memcpy(message, failure.data(), std::min(capacity, failure.size()));
  return failure.size();
}

void kvs_service_require_lease(kvs_service* service) {
  service->service.RequireLease();
}

void kvs_service_renew_lease(kvs_service* service, int64_t valid_for_ns) {
  service->service.RenewLease(valid_for_ns);
}

int kvs_service_probe_replication(kvs_service* service) {
  return service->service.ProbeReplication() ? 1 : 0;
}

int kvs_service_holds_replica(const kvs_service* service, const char* name,
                              size_t name_size) {
  return service->service.HoldsReplica(std::string_view(name, name_size)) ? 1
                                                                          : 0;
}

void kvs_service_detach(kvs_service* service, uint64_t region_id) {
  service->service.Detach(region_id);
}

kvs_status kvs_service_detach_flushed(kvs_service* service,
                                      uint64_t region_id) {
  return Report(service->service.DetachFlushed(region_id));
}

kvs_status kvs_service_detach_sealed(kvs_service* service, uint64_t region_id,
                                     uint32_t hold_ms) {
  return Report(service->service.DetachSealed(
      region_id, std::chrono::milliseconds(
                     std::min(hold_ms, kvs::limits::sealed_hold_ms))));
}

void kvs_service_take_over(kvs_service* service, uint64_t region_id,
                           const uint64_t* predecessors, size_t count) {
  service->service.TakeOver(
      region_id, std::vector<uint64_t>(predecessors, predecessors + count));
}

void kvs_service_handle(kvs_service* service, const void* request, size_t size,
                        kvs_value_sink sink, void* sink_context) {
  std::string reply;
  service->service.Handle(
      /*session=*/nullptr,
      std::string_view(static_cast<const char*>(request), size), &reply);
  sink(sink_context, reply.data(), reply.size());
}

void kvs_service_destroy(kvs_service* service) { delete service; }

kvs_status kvs_fabric_server_start(const kvs_fabric_options* options,
                                   kvs_service* service,
                                   kvs_fabric_server** server) {
  kvs::channel::ServerOptions server_options;
  Status status = Endpoint(*options, &server_options.endpoint);
  if (!status.ok()) return Report(status);
  if (options->workers == 0 || options->workers > 256) {
    return Report(Status::InvalidArgument("workers must be 1..256"));
  }
  server_options.host = options->host != nullptr ? options->host : "";
  server_options.port = options->port;
  server_options.workers = options->workers;
  server_options.secret = Secret(*options);
  server_options.client_secret = ClientSecret(*options);
  auto started = std::make_unique<kvs_fabric_server>();
  status = kvs::channel::Server::Start(server_options, &service->service,
                                       &started->server);
  if (!status.ok()) return Report(status);
  // The service replicates through this server: its connections carry the
  // buffers of the regions it backs up; its provider makes the connections
  // to backups.
  service->service.EnableReplication(server_options.endpoint,
                                     std::chrono::milliseconds(10'000),
                                     server_options.secret);
  started->service = service;
  *server = started.release();
  return KVS_OK;
}

uint16_t kvs_fabric_server_port(const kvs_fabric_server* server) {
  return server->server->port();
}

int kvs_fabric_server_probe(kvs_fabric_server* server) {
  return server->server->Probe() ? 1 : 0;
}

void kvs_fabric_server_stop(kvs_fabric_server* server) { delete server; }

kvs_status kvs_fabric_client_connect(const kvs_fabric_options* options,
                                     const char* host, uint16_t port,
                                     kvs_fabric_client** client) {
  kvs::channel::ClientOptions client_options;
  Status status = Endpoint(*options, &client_options.endpoint);
  if (!status.ok()) return Report(status);
  client_options.request_buffer_bytes = options->buffer_bytes;
  client_options.reply_buffer_bytes = options->buffer_bytes;
  client_options.request_timeout =
      std::chrono::milliseconds(options->timeout_ms);
  client_options.secret = ClientSecret(*options);
  auto connected = std::make_unique<kvs_fabric_client>();
  status = kvs::channel::Client::Connect(client_options, host, port,
                                         &connected->client);
  if (!status.ok()) return Report(status);
  *client = connected.release();
  return KVS_OK;
}

kvs_status kvs_fabric_client_submit(kvs_fabric_client* client, uint64_t tag,
                                    const void* request, size_t size) {
  auto* finished = &client->finished;
  const Status status = client->client->Submit(
      std::string_view(static_cast<const char*>(request), size),
      [finished, tag](Status result, std::string_view reply) {
        finished->push_back(
            {tag, static_cast<kvs_status>(result.code()),
             result.ok() ? std::string(reply) : std::string(result.message())});
      });
  return status.ok() ? KVS_OK : Report(status);
}

size_t kvs_fabric_client_poll(kvs_fabric_client* client,
                              kvs_fabric_reply_sink sink, void* context) {
  client->client->Poll();
  std::vector<kvs_fabric_client::Finished> finished;
  finished.swap(client->finished);
  for (const auto& done : finished) {
    sink(context, done.tag, done.status, done.bytes.data(), done.bytes.size());
  }
  return finished.size();
}

size_t kvs_fabric_client_outstanding(const kvs_fabric_client* client) {
  return client->client->outstanding();
}

void kvs_fabric_client_close(kvs_fabric_client* client) { delete client; }

}  // extern "C"
