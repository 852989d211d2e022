#include "service/region_service.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <vector>

#include "io/device_reads.h"
#include "lsm/region_iterator.h"
#include "replication/send_index_format.h"
#include "service/conditional_write.h"
#include "util/limits.h"
#include "util/thread_cpu.h"
#include "util/turns.h"

namespace kvs::service {
namespace {

// Leaves room under the message bound for headers and per-entry framing.
constexpr size_t kReplyBudgetBytes = wire::kMessageBytesMax - (64u << 10);

void Fail(const wire::Request& request, const Status& status,
          std::string* reply) {
  wire::Reply error;
  error.opcode = request.opcode;
  error.request_id = request.request_id;
  error.status = status.code();
  error.message = status.message().substr(0, wire::kMessageTextBytesMax);
  wire::EncodeReply(error, reply);
}

}  // namespace

RegionService::~RegionService() {
  // Held requests run again (refused: nothing takes them over now) on the
  // pool, which runs them before it goes.
  held_.Close();
  {
    // Its queued reads run to their end first (they answer their callers).
    std::unique_ptr<ThreadPool> pool;
    {
      std::lock_guard<std::mutex> lock(read_pool_mutex_);
      pool = std::move(read_pool_);
    }
  }
  DisableReplication();
}

void RegionService::Defer(const wire::Request& request, Respond respond) {
  if (deferred_requests_.fetch_add(1) >= limits::deferred_requests_max) {
    // The pool is full: run here, waiting.
    deferred_requests_.fetch_sub(1);
    Execute(request, std::move(respond), /*on_shard=*/false);
    return;
  }
  // The request's bytes are the caller's (a connection's buffer): the pool
  // takes its own copy.
  std::string bytes;
  wire::EncodeRequest(request, &bytes);
  SubmitDeferred(std::move(bytes), std::move(respond));
}

void RegionService::DeferEncoded(std::string bytes, Respond respond) {
  if (deferred_requests_.fetch_add(1) >= limits::deferred_requests_max) {
    deferred_requests_.fetch_sub(1);
    wire::Request again;
    const Status decoded = wire::DecodeRequest(bytes, &again);
    KVS_CHECK_MSG(decoded.ok(), "a request encoded here does not decode");
    Execute(again, std::move(respond), /*on_shard=*/false);
    return;
  }
  SubmitDeferred(std::move(bytes), std::move(respond));
}

void RegionService::SubmitDeferred(std::string bytes, Respond respond) {
  std::lock_guard<std::mutex> lock(read_pool_mutex_);
  if (read_pool_ == nullptr) {
    read_pool_ = std::make_unique<ThreadPool>(limits::deferred_request_threads,
                                              "kvs-deferred");
  }
  read_pool_->Submit(
      [this, bytes = std::move(bytes), respond = std::move(respond)]() mutable {
        wire::Request again;
        const Status decoded = wire::DecodeRequest(bytes, &again);
        KVS_CHECK_MSG(decoded.ok(), "a request encoded here does not decode");
        Execute(again, std::move(respond), /*on_shard=*/false);
        deferred_requests_.fetch_sub(1);
      });
}

void RegionService::UseEngine(engine::Engine* engine) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  engine_ = engine;
}

void RegionService::EnableReplication(const fabric::EndpointOptions& endpoint,
                                      std::chrono::milliseconds timeout,
                                      const std::string& secret,
                                      std::chrono::milliseconds stall_timeout) {
  replication::ReplicatorOptions options;
  options.endpoint = endpoint;
  options.timeout = timeout;
  options.stall_timeout = stall_timeout;
  options.secret = secret;
  auto replicator = std::make_shared<replication::Replicator>(options);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  if (engine_ != nullptr) engine_->SetReplicationTap(replicator.get());
  replicating_ = true;
  replicator_ = std::move(replicator);
}

void RegionService::DisableReplication() {
  std::shared_ptr<replication::Replicator> replicator;
  std::vector<std::shared_ptr<replication::ReplicaSink>> sinks;
  std::vector<std::shared_ptr<replication::SendIndexSink>> index_sinks;
  engine::Engine* engine = nullptr;
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    replicator = std::move(replicator_);
    replicating_ = false;
    engine = engine_;
    for (auto& [region_id, attached] : regions_) {
      if (attached.sink) sinks.push_back(std::move(attached.sink));
      if (attached.index_sink) {
        index_sinks.push_back(std::move(attached.index_sink));
      }
    }
  }
  // Outside the lock: closing streams waits for the backups, and the last
  // reference to a sink applies what its buffer holds. The streams close
  // first: a closing Send-Index stream still takes the region's events.
  if (replicator != nullptr) replicator->CloseAll();
  if (engine != nullptr) engine->SetReplicationTap(nullptr);
  replicator.reset();
  sinks.clear();
  index_sinks.clear();
}

Status RegionService::Attach(uint64_t region_id, uint64_t epoch,
                             lsm::Region* region, Placement placement) {
  std::shared_ptr<replication::Replicator> replicator;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    replicator = replicator_;
  }
  // A primary's streams are open before the placement lets writes in, so
  // none goes unreplicated; a group that shrank to no backups stays open
  // with none, and one with a minimum of replicas above one is opened with
  // none: its writes count that minimum (and are refused below it).
  const bool replicated =
      placement.primary &&
      (placement.replicated || !placement.backups.empty() ||
       placement.min_replicas > 1 ||
       (replicator != nullptr && replicator->Replicates(region_id)));
  if (replicator != nullptr && replicated) {
    replicator->Open(region_id, epoch, placement.backups, placement.mode,
                     region, placement.min_replicas, placement.stream_key);
  }
  std::shared_ptr<replication::ReplicaSink> old_sink;
  std::shared_ptr<replication::SendIndexSink> old_index_sink;
  std::shared_ptr<Gate> old_gate;
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    const auto held = regions_.find(region_id);
    // A backup keeps its stream (and what it holds) across epochs while
    // the same primary leads the group; a new primary, a promotion or
    // another region object starts over.
    const bool same_stream =
        held != regions_.end() && !placement.primary &&
        held->second.placement != nullptr && !held->second.placement->primary &&
        held->second.region == region && !placement.primary_server.empty() &&
        held->second.placement->primary_server == placement.primary_server &&
        epoch >= held->second.epoch;
    // Attaching over a backup's open stream without keeping it cuts it.
    std::optional<Cut> cut;
    if (held != regions_.end() && !same_stream) cut = CutOf(held->second);
    const bool cuts = cut.has_value();
    if (!cuts) {
      const auto earlier = cut_.find(region_id);
      if (earlier != cut_.end()) cut = earlier->second;
    }
    if (!placement.primary && !placement.joining &&
        placement.mode == replication::ReplicationMode::kSendIndex &&
        cut.has_value() && cut->primary_server == placement.primary_server) {
      return Status::FromCode(  // before anything changed
          Status::Code::kStaleEpoch,
          "region " + std::to_string(region_id) + ": the stream from " +
              placement.primary_server + " was cut here at epoch " +
              std::to_string(cut->epoch) +
              " (the region closed or started over while it wrote), so this "
              "backup may lack writes it acknowledged: it must be opened "
              "joining, for a new stream to catch it up");
    }
    if (placement.primary) {
      cut_.erase(region_id);  // it leads: its own lineage from here
    } else if (cuts) {
      cut_[region_id] = *cut;
    }
    Attached& attached = regions_[region_id];
    if (!same_stream) {
      old_sink = std::move(attached.sink);
      old_index_sink = std::move(attached.index_sink);
    }
    if (attached.region != region || attached.gate == nullptr) {
      old_gate = std::move(attached.gate);
      attached.gate = std::make_shared<Gate>();
    }
    attached.epoch = epoch;
    attached.region = region;
    attached.placement =
        std::make_shared<const Placement>(std::move(placement));
  }
  // Requests on the old region object finish before it may be freed, and
  // the old sink applies what it holds to the region it was made for.
  Drain(old_gate);
  old_sink.reset();
  old_index_sink.reset();
  if (replicator != nullptr && !replicated) {
    (void)replicator->Close(region_id);
  }
  // Attached again after its seal (its split failed): what it held runs.
  held_.Release(region_id);
  return Status::Ok();
}

Status RegionService::DetachSealed(uint64_t region_id,
                                   std::chrono::milliseconds hold) {
  // Held before it goes, so that no request finds it neither served nor
  // held.
  held_.Hold(region_id, std::chrono::steady_clock::now() + hold);
  const Status detached = DetachFlushed(region_id);
  if (!detached.ok()) held_.Release(region_id);  // no split follows
  return detached;
}

void RegionService::TakeOver(uint64_t region_id,
                             const std::vector<uint64_t>& predecessors) {
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    for (const uint64_t predecessor : predecessors) {
      auto [it, added] = successors_.try_emplace(predecessor);
      std::vector<uint64_t>& successors = it->second;
      if (std::find(successors.begin(), successors.end(), region_id) ==
          successors.end()) {
        successors.push_back(region_id);
      }
      if (added) successor_order_.push_back(predecessor);
    }
    while (successor_order_.size() > limits::region_successors_max) {
      successors_.erase(successor_order_.front());
      successor_order_.pop_front();
    }
  }
  // Held until the hold ends, not just this successor's attach: requests
  // for the keys of a sibling not attached yet are held again.
  for (const uint64_t predecessor : predecessors) held_.RunAgain(predecessor);
}

std::optional<wire::Request> RegionService::Redirected(
    const wire::Request& request) const {
  const auto found = successors_.find(request.region_id);
  if (found == successors_.end()) return std::nullopt;
  std::vector<std::string_view> keys;
  switch (request.opcode) {
    case wire::Opcode::kPut:
    case wire::Opcode::kDelete:
    case wire::Opcode::kGet:
    case wire::Opcode::kCompareAndSet:
    case wire::Opcode::kIncrement:
      keys.push_back(request.key);
      break;
    case wire::Opcode::kMultiGet:
      keys = request.keys;
      break;
    case wire::Opcode::kBatch:
      for (const wire::BatchWrite& write : request.writes) {
        keys.push_back(write.key);
      }
      break;
    default:
      return std::nullopt;  // a scan: its client must learn where each ends
  }
  for (const uint64_t successor : found->second) {
    const auto it = regions_.find(successor);
    if (it == regions_.end() || !it->second.placement->primary) continue;
    const Placement& placement = *it->second.placement;
    if (std::all_of(keys.begin(), keys.end(), [&](std::string_view key) {
          return placement.Contains(key);
        })) {
      wire::Request redirected = request;
      redirected.region_id = successor;
      redirected.epoch = it->second.epoch;
      return redirected;
    }
  }
  return std::nullopt;
}

std::optional<RegionService::Cut> RegionService::CutOf(
    const Attached& attached) {
  if (attached.placement == nullptr || attached.placement->primary ||
      (attached.sink == nullptr && attached.index_sink == nullptr)) {
    return std::nullopt;  // no stream was open into it: nothing lands unseen
  }
  return Cut{attached.placement->primary_server, attached.epoch};
}

void RegionService::Drain(const std::shared_ptr<Gate>& gate) {
  if (gate != nullptr) gate->Close();
}

Status RegionService::CheckPlacement(const wire::Request& request,
                                     const Attached& attached) {
  const Placement& placement = *attached.placement;
  if (!placement.primary) {
    return Status::FromCode(Status::Code::kNotPrimary,
                            "region " + std::to_string(request.region_id) +
                                " is held here as a backup");
  }
  const auto outside = [&](std::string_view key) {
    return Status::FromCode(Status::Code::kWrongRegion,
                            "key outside region " +
                                std::to_string(request.region_id) + " (" +
                                std::to_string(key.size()) + " bytes)");
  };
  switch (request.opcode) {
    case wire::Opcode::kPut:
    case wire::Opcode::kDelete:
    case wire::Opcode::kGet:
    case wire::Opcode::kCompareAndSet:
    case wire::Opcode::kIncrement:
      if (!placement.Contains(request.key)) return outside(request.key);
      break;
    case wire::Opcode::kMultiGet:
      for (const std::string_view key : request.keys) {
        if (!placement.Contains(key)) return outside(key);
      }
      break;
    case wire::Opcode::kBatch:
      // All or nothing within one region: every key must be here.
      for (const wire::BatchWrite& write : request.writes) {
        if (!placement.Contains(write.key)) return outside(write.key);
      }
      break;
    case wire::Opcode::kScanReverse:
      // A reverse scan starts below its end, which must lie in the range
      // (above its start, at most its end; none: the range is unbounded
      // above); its start is clipped to the range's.
      if (request.end ? (*request.end <= std::string_view(placement.start) ||
                         (placement.end && *placement.end < *request.end))
                      : placement.end.has_value()) {
        return Status::FromCode(Status::Code::kWrongRegion,
                                "a reverse scan's end outside region " +
                                    std::to_string(request.region_id));
      }
      break;
    case wire::Opcode::kScan:
      // A scan starts inside the range (an empty start: at its beginning);
      // its end is clipped to the range's.
      if (!request.key.empty() && !placement.Contains(request.key)) {
        return outside(request.key);
      }
      break;
    case wire::Opcode::kNoop:
      break;
  }
  return Status::Ok();
}

void RegionService::Detach(uint64_t region_id) {
  (void)DetachFlushed(region_id);
}

Status RegionService::DetachFlushed(uint64_t region_id) {
  std::shared_ptr<replication::Replicator> replicator;
  std::shared_ptr<replication::ReplicaSink> sink;
  std::shared_ptr<replication::SendIndexSink> index_sink;
  std::shared_ptr<Gate> gate;
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    replicator = replicator_;
    const auto it = regions_.find(region_id);
    if (it == regions_.end()) return Status::Ok();
    if (const std::optional<Cut> cut = CutOf(it->second)) {
      cut_[region_id] = *cut;
    }
    sink = std::move(it->second.sink);
    index_sink = std::move(it->second.index_sink);
    gate = std::move(it->second.gate);
    regions_.erase(it);
  }
  // No request finds it now; those that did finish first (a write inside
  // has registered with its group, which Close below hands over).
  Drain(gate);
  // The primary hands its last records over; a backup applies its buffer.
  const Status closed =
      replicator != nullptr ? replicator->Close(region_id) : Status::Ok();
  sink.reset();
  index_sink.reset();
  return closed;
}

Status RegionService::CheckBackup(
    std::map<uint64_t, Attached>::const_iterator it, uint64_t region_id,
    uint64_t epoch, bool open, uint64_t connection) const {
  if (it == regions_.end() || it->second.placement->primary) {
    return Status::FromCode(Status::Code::kWrongRegion,
                            "region " + std::to_string(region_id) +
                                " is not held here as a backup");
  }
  const bool current =
      open ? it->second.epoch == epoch
           : epoch <= it->second.epoch && epoch >= it->second.stream_epoch;
  if (!current) {
    return Status::FromCode(Status::Code::kStaleEpoch,
                            "region " + std::to_string(region_id) +
                                " is at epoch " +
                                std::to_string(it->second.epoch) +
                                " here, not " + std::to_string(epoch));
  }
  if (!open && it->second.stream_connection != connection) {
    return Status::InvalidArgument(
        "region " + std::to_string(region_id) +
        ": its stream's messages come from the connection its OPEN came on, "
        "not this one");
  }
  return Status::Ok();
}

void RegionService::HandleReplication(channel::Session* session,
                                      std::string_view message,
                                      std::string* reply) {
  replication::Control control;
  replication::ControlReply answer;
  answer.status = replication::DecodeControl(message, &control);
  // Declared before the sinks below: they go (a build-index sink applying
  // what its buffer holds) while the region is still held.
  std::optional<Gate::Pass> pass;
  if (answer.status.ok()) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    const auto it = regions_.find(control.region_id);
    answer.status = CheckBackup(it, control.region_id, control.epoch,
                                control.type == replication::ControlType::kOpen,
                                session->id());
    if (answer.status.ok()) {
      pass.emplace(it->second.gate.get());
      if (!pass->entered()) {
        answer.status =
            Status::FromCode(Status::Code::kWrongRegion,
                             "region " + std::to_string(control.region_id) +
                                 " is being closed here");
      }
    }
    if (!answer.status.ok()) {
      // refused: the reply says why
    } else if (control.type == replication::ControlType::kOpen &&
               it->second.placement->stream_key.empty()) {
      answer.status = Status::InvalidArgument(
          "region " + std::to_string(control.region_id) +
          " has no stream key here: it takes no stream");
    } else if (control.type == replication::ControlType::kOpen &&
               !replication::VerifyOpen(
                   control, it->second.placement->stream_key, session->id())) {
      answer.status = Status::InvalidArgument(
          "OPEN of region " + std::to_string(control.region_id) +
          " does not prove the region's stream key: only the group's primary "
          "opens a stream");
    } else if (control.type == replication::ControlType::kOpen) {
      if (!replicating_) {
        answer.status = Status::InvalidArgument("replication is not enabled");
      } else {
        std::shared_ptr<replication::ReplicaSink> old =
            std::move(it->second.sink);
        std::shared_ptr<replication::SendIndexSink> old_index =
            std::move(it->second.index_sink);
        lock.unlock();
        old.reset();  // applies what the last stream left
        old_index.reset();
        lock.lock();
        const auto again = regions_.find(control.region_id);
        if (again == regions_.end() || again->second.epoch != control.epoch ||
            !replicating_) {
          answer.status = Status::FromCode(Status::Code::kStaleEpoch,
                                           "region changed during OPEN");
        } else if (control.buffer ==
                       static_cast<uint32_t>(
                           replication::ReplicationMode::kSendIndex) &&
                   !again->second.placement->joining && engine_ != nullptr &&
                   replication::HoldsReplica(*engine_->volume(),
                                             again->second.region->id()) &&
                   !replication::HoldsReplicaOf(*engine_->volume(),
                                                again->second.region->id(),
                                                control.sequence)) {
          // The master may promote this backup: a new stream that would
          // start it over (another lineage) waits until the master counts
          // it as joining; one of its lineage resumes from what it holds.
          answer.status = Status::FromCode(
              Status::Code::kStaleEpoch,
              "region " + std::to_string(control.region_id) +
                  " is held here in sync at epoch " +
                  std::to_string(control.epoch) +
                  "; a new stream needs it joining (a new epoch)");
        } else if (control.buffer ==
                   static_cast<uint32_t>(
                       replication::ReplicationMode::kSendIndex)) {
          std::unique_ptr<replication::SendIndexSink> sink;
          answer.status =
              engine_ == nullptr
                  ? Status::InvalidArgument(
                        "send-index needs the service to know its engine")
                  : replication::SendIndexSink::Create(
                        session, control.region_id, engine_->volume(),
                        again->second.region->id(), control.sequence, &sink,
                        &answer);
          if (answer.status.ok()) {
            answer.buffers = sink->buffers();
            cut_.erase(control.region_id);  // a new stream: nothing cut
            again->second.index_sink = std::move(sink);
            again->second.stream_epoch = control.epoch;
            again->second.stream_connection = session->id();
          }
        } else if (control.buffer !=
                   static_cast<uint32_t>(
                       replication::ReplicationMode::kBuildIndex)) {
          answer.status = Status::InvalidArgument(
              "OPEN names an unknown replication mode " +
              std::to_string(control.buffer));
        } else {
          std::unique_ptr<replication::ReplicaSink> sink;
          answer.status = replication::ReplicaSink::Create(
              session, again->second.region, control.region_id, &sink);
          if (answer.status.ok()) {
            answer.buffers = sink->buffers();
            cut_.erase(control.region_id);  // a new stream: nothing cut
            again->second.sink = std::move(sink);
            again->second.stream_epoch = control.epoch;
            again->second.stream_connection = session->id();
          }
        }
      }
    } else {
      std::shared_ptr<replication::ReplicaSink> sink = it->second.sink;
      lock.unlock();
      answer.status = sink == nullptr
                          ? Status::InvalidArgument("FLUSH before OPEN")
                          : sink->Flush(control);
    }
  }
  replication::EncodeControlReply(answer, reply);
}

void RegionService::HandleIndexControl(channel::Session* session,
                                       std::string_view message,
                                       std::string* reply) {
  replication::IndexControl control;
  replication::ControlReply answer;
  answer.status = replication::DecodeIndexControl(message, &control);
  std::shared_ptr<replication::SendIndexSink> sink;
  if (answer.status.ok()) {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const auto it = regions_.find(control.region_id);
    answer.status = CheckBackup(it, control.region_id, control.epoch,
                                /*open=*/false, session->id());
    if (!answer.status.ok()) {
      // refused: the reply says why
    } else if (it->second.index_sink == nullptr) {
      answer.status = Status::InvalidArgument(
          "region " + std::to_string(control.region_id) +
          " has no send-index stream (OPEN first)");
    } else {
      sink = it->second.index_sink;
    }
  }
  if (sink != nullptr) answer.status = sink->Handle(control);
  replication::EncodeControlReply(answer, reply);
}

Status RegionService::PromoteBackup(uint64_t region_id,
                                    std::string_view engine_name,
                                    const lsm::KeyBounds& bounds,
                                    lsm::Region** region,
                                    PromotionReport* report) {
  *region = nullptr;
  std::shared_ptr<replication::SendIndexSink> sink;
  std::shared_ptr<replication::ReplicaSink> build_sink;
  std::shared_ptr<Gate> gate;
  engine::Engine* engine = nullptr;
  {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    engine = engine_;
    if (engine == nullptr) {
      return Status::InvalidArgument("the service does not know its engine");
    }
    const auto it = regions_.find(region_id);
    if (it != regions_.end()) {
      if (it->second.placement->primary) {
        return Status::InvalidArgument("region " + std::to_string(region_id) +
                                       " is primary here already");
      }
      sink = std::move(it->second.index_sink);
      build_sink = std::move(it->second.sink);
      gate = std::move(it->second.gate);
      regions_.erase(it);
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto micros_since = [](Clock::time_point from) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                              from)
            .count());
  };
  // The old region object goes in the reopening: no request may be using it.
  Clock::time_point step = Clock::now();
  Drain(gate);
  build_sink.reset();
  if (sink != nullptr) sink->Stop();
  std::vector<replication::LandedLog> landed;
  if (sink != nullptr) landed = sink->Landed();
  report->drain_us = micros_since(step);
  step = Clock::now();
  Status adopted = engine->ReopenRegion(
      engine_name,
      [&](uint64_t id) {
        report->close_us = micros_since(step);
        step = Clock::now();
        if (!replication::HoldsReplica(*engine->volume(), id)) {
          return Status::InvalidArgument("region " + std::string(engine_name) +
                                         " holds no replica to promote");
        }
        const Status status = replication::AdoptReplica(
            engine->volume(), id, landed, bounds, &report->adoption);
        report->adopt_us = micros_since(step);
        step = Clock::now();
        return status;
      },
      region);
  report->open_us = micros_since(step);
  // The buffers go only now: adoption read what landed in them.
  sink.reset();
  return adopted;
}

bool RegionService::HoldsReplica(std::string_view engine_name) const {
  engine::Engine* engine = nullptr;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    engine = engine_;
  }
  if (engine == nullptr) return false;
  const auto id = engine->RegionId(engine_name);
  return id.has_value() && replication::HoldsReplica(*engine->volume(), *id);
}

Status RegionService::BackupLevels(
    uint64_t region_id, std::map<size_t, lsm::LevelDescriptor>* levels) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  const auto it = regions_.find(region_id);
  if (it == regions_.end() || it->second.index_sink == nullptr) {
    return Status::NotFound("region " + std::to_string(region_id) +
                            " has no send-index stream here");
  }
  *levels = it->second.index_sink->levels();
  return Status::Ok();
}

Status RegionService::ReplicaDigest(uint64_t region_id,
                                    replication::ContentsDigest* digest) const {
  std::shared_ptr<replication::SendIndexSink> sink;
  lsm::KeyBounds bounds;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const auto it = regions_.find(region_id);
    if (it == regions_.end()) {
      return Status::NotFound("region " + std::to_string(region_id) +
                              " is not held here");
    }
    const Placement& placement = *it->second.placement;
    if (placement.primary) {
      return Status::InvalidArgument("region " + std::to_string(region_id) +
                                     " is held here as its primary");
    }
    sink = it->second.index_sink;
    bounds = {placement.start, placement.end};
    if (sink == nullptr &&
        placement.mode == replication::ReplicationMode::kSendIndex) {
      return Status::InvalidArgument("region " + std::to_string(region_id) +
                                     " has no send-index stream here yet");
    }
    if (sink == nullptr) {
      // Build-Index: the region, and the records applied only at the next
      // FLUSH or at closing.
      std::map<std::string, replication::Overlay> overlay;
      if (it->second.sink != nullptr) {
        const std::string pending = it->second.sink->Pending();
        std::vector<replication::Record> records;
        KVS_RETURN_IF_ERROR(replication::DecodeRecords(pending, &records));
        for (const replication::Record& record : records) {
          const bool put = record.type == replication::RecordType::kPut;
          overlay[std::string(record.key)] = {
              put, put ? replication::PairDigest::Hash(record.key, record.value)
                       : 0};
        }
      }
      return replication::DigestRegion(*it->second.region, overlay, digest);
    }
  }
  // The snapshot pins what it names, so the stream goes on meanwhile.
  replication::ReplicaSnapshot snapshot;
  sink->Snapshot(&snapshot);
  return replication::DigestReplica(snapshot, bounds, digest);
}

Status RegionService::BackupCopies(
    uint64_t region_id, log::LogKind kind,
    std::map<uint64_t, replication::MirroredSegment>* copies) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  const auto it = regions_.find(region_id);
  if (it == regions_.end() || it->second.index_sink == nullptr) {
    return Status::NotFound("region " + std::to_string(region_id) +
                            " has no send-index stream here");
  }
  *copies = it->second.index_sink->copies(kind);
  return Status::Ok();
}

std::shared_ptr<replication::Replicator> RegionService::ReplicatorOfPrimary(
    uint64_t region_id) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  const auto it = regions_.find(region_id);
  if (it == regions_.end() || !it->second.placement->primary ||
      it->second.placement->backups.empty()) {
    return nullptr;
  }
  return replicator_;
}

std::vector<replication::BackupState> RegionService::BackupStates(
    uint64_t region_id) const {
  const auto replicator = ReplicatorOfPrimary(region_id);
  if (replicator == nullptr) return {};
  return replicator->BackupStates(region_id);
}

std::vector<replication::BackupLag> RegionService::BackupLags(
    uint64_t region_id) const {
  const auto replicator = ReplicatorOfPrimary(region_id);
  if (replicator == nullptr) return {};
  return replicator->BackupLags(region_id);
}

std::vector<std::string> RegionService::BackupFailures(
    uint64_t region_id) const {
  const auto replicator = ReplicatorOfPrimary(region_id);
  if (replicator == nullptr) return {};
  return replicator->BackupFailures(region_id);
}

int RegionService::BackupsCaughtUp(uint64_t region_id) const {
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const auto it = regions_.find(region_id);
    if (it == regions_.end() || !it->second.placement->primary) return 0;
    if (it->second.placement->backups.empty()) return 1;
  }
  const std::vector<replication::BackupState> states = BackupStates(region_id);
  if (states.empty()) return 0;
  int summary = 1;
  for (const replication::BackupState state : states) {
    if (state == replication::BackupState::kFailed) return -1;
    if (state != replication::BackupState::kInSync) summary = 0;
  }
  return summary;
}

replication::ReplicatorStats RegionService::ReplicationStats() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return replicator_ != nullptr ? replicator_->stats()
                                : replication::ReplicatorStats{};
}

bool RegionService::ProbeReplication() {
  std::shared_lock<std::shared_mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  return replicator_ == nullptr || replicator_->Probe();
}

replication::SendIndexSinkStats RegionService::BackupStats() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  replication::SendIndexSinkStats total;
  for (const auto& [region_id, attached] : regions_) {
    if (attached.sink != nullptr) {
      total.index_cpu_ns += attached.sink->stats().apply_cpu_ns;
    }
    if (attached.index_sink == nullptr) continue;
    const replication::SendIndexSinkStats one = attached.index_sink->stats();
    total.tails += one.tails;
    total.tail_bytes += one.tail_bytes;
    total.segments += one.segments;
    total.levels += one.levels;
    total.log_cpu_ns += one.log_cpu_ns;
    total.index_cpu_ns += one.index_cpu_ns;
  }
  return total;
}

channel::RequestHandler::AnswerWatch RegionService::EndOfTurn(bool may_watch) {
  std::shared_ptr<replication::Replicator> replicator;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    replicator = replicator_;
  }
  if (replicator == nullptr || !replicator->Drive(may_watch)) return {};
  return {replicator->AnswerFd(), replicator->id(), replicator};
}

void RegionService::AnswersArrived() {
  std::shared_ptr<replication::Replicator> replicator;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    replicator = replicator_;
  }
  if (replicator != nullptr) replicator->AnswersArrived();
}

bool RegionService::IsControl(std::string_view request) const {
  return replication::IsIndexControl(request) ||
         replication::IsControl(request);
}

void RegionService::Handle(channel::Session* session, std::string_view bytes,
                           std::string* reply) {
  std::promise<std::string> answered;
  std::future<std::string> answer = answered.get_future();
  HandleAsync(session, bytes, [&answered](std::string done) {
    answered.set_value(std::move(done));
  });
  *reply = answer.get();
}

void RegionService::HandleAsync(channel::Session* session,
                                std::string_view bytes, Respond respond) {
  std::string reply;
  // Doors: replication messages only on a peer's connection. Anywhere
  // else every message is a client request, whatever its bytes say.
  const bool peer =
      session != nullptr && session->kind() == channel::ConnectionKind::kPeer;
  if (peer && replication::IsIndexControl(bytes)) {
    HandleIndexControl(session, bytes, &reply);
    respond(std::move(reply));
    return;
  }
  if (peer && replication::IsControl(bytes)) {
    HandleReplication(session, bytes, &reply);
    respond(std::move(reply));
    return;
  }
  respond = Observed(std::move(respond));
  wire::Request request;
  Status decoded = wire::DecodeRequest(bytes, &request);
  if (!decoded.ok() && replication::IsControl(bytes)) {
    decoded = Status::InvalidArgument(
        "a replication message on a client's connection: refused (only a "
        "replicating peer's fabric connection carries them)");
  }
  if (!decoded.ok()) {
    // Answer what can be answered: the request id if the header is there.
    wire::Request header;
    header.opcode = wire::Opcode::kNoop;
    if (bytes.size() >= wire::kRequestHeaderBytes) {
      std::memcpy(&header.request_id, bytes.data() + 8, 8);
    }
    Fail(header, decoded, &reply);
    respond(std::move(reply));
    return;
  }
  Execute(request, std::move(respond), EndsTurns());
}

RegionService::Respond RegionService::Observed(Respond respond) {
  const int64_t begin = request_metrics_.Begin();
  if (begin == 0) return respond;
  return [this, begin, respond = std::move(respond)](std::string reply) {
    request_metrics_.RecordReply(reply, begin);
    respond(std::move(reply));
  };
}

std::string RegionService::WriteAnswer(const wire::Reply& reply, Status held,
                                       uint64_t region_id, bool wrote) const {
  // Acknowledged only while the lease holds: a primary paused after posting
  // it may find its backups' completions on waking, after the group moved
  // on without it (the bytes landed in buffers its successor does not use).
  // Applied here, so its outcome is unknown; one that wrote nothing answers
  // as a read does.
  if (held.ok() && !LeaseHeld()) {
    held = wrote ? Status::IoError("region " + std::to_string(region_id) +
                                   ": this server's lease lapsed while the "
                                   "write replicated (it may no longer be the "
                                   "primary); the write's outcome is unknown")
                 : LeaseLapsed(region_id);
  }
  std::string answer;
  if (held.ok()) {
    wire::EncodeReply(reply, &answer);
  } else {
    wire::Request header;
    header.opcode = reply.opcode;
    header.request_id = reply.request_id;
    Fail(header, held, &answer);
  }
  return answer;
}

void RegionService::ExecuteAsync(const wire::Request& request,
                                 channel::RequestHandler::Respond respond) {
  Execute(request, Observed(std::move(respond)), EndsTurns());
}

void RegionService::Execute(const wire::Request& request,
                            channel::RequestHandler::Respond respond,
                            bool on_shard) {
  std::string reply;
  const auto refuse = [&](const Status& status) {
    Fail(request, status, &reply);
    respond(std::move(reply));
  };
  if (request.opcode == wire::Opcode::kNoop) {
    wire::Reply ok;
    ok.opcode = request.opcode;
    ok.request_id = request.request_id;
    wire::EncodeReply(ok, &reply);
    respond(std::move(reply));
    return;
  }
  lsm::Region* region = nullptr;
  std::shared_ptr<const Placement> placed;
  std::shared_ptr<replication::Replicator> replicating;
  std::shared_ptr<Gate> gate;
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    const auto it = regions_.find(request.region_id);
    if (it == regions_.end()) {
      // A region split or merged here: the successor that leads its keys
      // here serves the request (successors have higher ids, so this ends).
      if (std::optional<wire::Request> redirected = Redirected(request)) {
        lock.unlock();
        Execute(*redirected, std::move(respond), on_shard);
        return;
      }
      // Sealed or retired here, its successors not yet attached: held until
      // they are (or the hold ends), then run again.
      if (held_.Park(request, &respond)) return;
      refuse(Status::FromCode(Status::Code::kWrongRegion,
                              "region " + std::to_string(request.region_id) +
                                  " is not served here"));
      return;
    }
    if (it->second.epoch != request.epoch) {
      refuse(Status::FromCode(Status::Code::kStaleEpoch,
                              "region " + std::to_string(request.region_id) +
                                  " is at epoch " +
                                  std::to_string(it->second.epoch) + ", not " +
                                  std::to_string(request.epoch)));
      return;
    }
    const Status allowed = CheckPlacement(request, it->second);
    if (!allowed.ok()) {
      refuse(allowed);
      return;
    }
    region = it->second.region;
    placed = it->second.placement;
    gate = it->second.gate;
    if (placed->replicated || !placed->backups.empty() ||
        placed->min_replicas > 1) {
      replicating = replicator_;
      if (replicating == nullptr) {
        // Its placement asks for replicas this server cannot make: never
        // apply a write as if it had none.
        refuse(Status::FromCode(
            Status::Code::kNotEnoughReplicas,
            "region " + std::to_string(request.region_id) +
                " needs replicas and replication is not enabled on this "
                "server; nothing was written"));
        return;
      }
    }
  }
  // Holds the region for this request: it is not freed (Detach, a
  // promotion, a re-attach with another region object) while used below.
  Gate::Pass pass(gate.get());
  if (!pass.entered()) {
    refuse(Status::FromCode(Status::Code::kWrongRegion,
                            "region " + std::to_string(request.region_id) +
                                " is being closed here"));
    return;
  }
  const Placement& placement = *placed;
  const bool write = wire::Writes(request.opcode);
  const bool batch = request.opcode == wire::Opcode::kBatch;
  // What a write would put: a conditional write's new value (an increment's
  // 8 bytes), nothing for a delete.
  const bool puts = request.opcode == wire::Opcode::kPut ||
                    request.opcode == wire::Opcode::kIncrement ||
                    (request.opcode == wire::Opcode::kCompareAndSet &&
                     request.replacement.has_value());
  const std::string_view put_value =
      request.opcode == wire::Opcode::kCompareAndSet
          ? request.replacement.value_or(std::string_view())
      : request.opcode == wire::Opcode::kIncrement
          ? std::string_view("01234567")
          : request.value;
  // On a shard, a request that might wait for the engine or the device
  // waits on the pool instead: a write while its L0 is full with a
  // compaction behind or whose log would write a full chunk or roll to a
  // new segment, a write that syncs (sync mode), and any request of a group
  // no backup holds (replication/replicator.h, "alone"): its writes are
  // acknowledged once synced, its reads once what they saw is. A write
  // decided by what the region holds whose read needs the device goes there
  // too, once its read was refused (below).
  // A batch always does (it holds the region's L0 lock exclusively and may
  // start a log segment first: lsm::Region::WriteBatch).
  if (on_shard &&
      ((write && (batch || region->WritesSync() ||
                  region->WriteMayWait(puts, request.key, put_value))) ||
       (replicating != nullptr && replicating->Alone(request.region_id)))) {
    pass.Release();
    Defer(request, std::move(respond));
    return;
  }
  // A write is refused before it is applied, a read after it read (it may
  // have waited past the lease meanwhile): neither answers from a server
  // the cluster may have moved past.
  if (write && !LeaseHeld()) {
    refuse(LeaseLapsed(request.region_id));
    return;
  }
  wire::Reply result;
  result.opcode = request.opcode;
  result.request_id = request.request_id;
  Status status;
  std::string value;
  std::vector<lsm::RegionIterator::Pair> pairs;
  std::vector<std::string> values;
  std::vector<bool> found;
  // A compare-and-set's or an increment's outcome, decided in the region's
  // write order (the reply's views point into it): made for those only.
  std::shared_ptr<ConditionalOutcome> decision;
  // On a shard, a read runs with device reads refused; one that needed
  // the device goes to the deferred pool (io/device_reads.h).
  std::optional<io::DeviceReadsRefused> refusing;
  if (!write && on_shard) refusing.emplace();
  switch (request.opcode) {
    case wire::Opcode::kNoop:
      break;
    case wire::Opcode::kPut:
    case wire::Opcode::kDelete: {
      const bool put = request.opcode == wire::Opcode::kPut;
      const auto apply = [&] {
        const bool timed = inserts_.fetch_add(1, std::memory_order_relaxed) %
                               kInsertSampleEvery ==
                           0;
        const uint64_t start = timed ? ThreadCpuNanos() : 0;
        Status applied = put ? region->Put(request.key, request.value)
                             : region->Delete(request.key);
        if (timed) {
          insert_cpu_ns_.fetch_add(
              (ThreadCpuNanos() - start) * kInsertSampleEvery,
              std::memory_order_relaxed);
        }
        return applied;
      };
      if (replicating == nullptr) {
        std::lock_guard<std::mutex> stripe(
            write_stripes_[std::hash<std::string_view>{}(request.key) %
                           kWriteStripes]);
        status = apply();
        break;
      }
      // Answered when the backups hold it, on the replication thread: no
      // thread waits (replication/replicator.h).
      replicating->Write(
          request.region_id,
          {put ? replication::RecordType::kPut
               : replication::RecordType::kDelete,
           request.key,
           put ? request.value : std::string_view(),
           {}},
          region, apply,
          [this, opcode = request.opcode, request_id = request.request_id,
           region_id = request.region_id,
           respond = std::move(respond)](Status held) {
            wire::Reply acknowledged;
            acknowledged.opcode = opcode;
            acknowledged.request_id = request_id;
            respond(WriteAnswer(acknowledged, held, region_id, true));
          });
      return;
    }
    case wire::Opcode::kBatch: {
      std::vector<lsm::Region::BatchWrite> writes;
      writes.reserve(request.writes.size());
      for (const wire::BatchWrite& one : request.writes) {
        writes.push_back({one.put, one.key, one.value});
      }
      const auto apply = [&] { return region->WriteBatch(writes); };
      if (replicating == nullptr) {
        status = apply();
        break;
      }
      std::vector<replication::Record> records;
      records.reserve(request.writes.size());
      for (const wire::BatchWrite& one : request.writes) {
        records.push_back({one.put ? replication::RecordType::kPut
                                   : replication::RecordType::kDelete,
                           one.key,
                           one.value,
                           {}});
      }
      // One outcome for all of it, once the backups hold it (a unit on
      // every stream: replication/replicator.h, WriteBatch).
      replicating->WriteBatch(
          request.region_id, records, region, apply,
          [this, request_id = request.request_id, region_id = request.region_id,
           respond = std::move(respond)](Status held) {
            wire::Reply acknowledged;
            acknowledged.opcode = wire::Opcode::kBatch;
            acknowledged.request_id = request_id;
            respond(WriteAnswer(acknowledged, held, region_id, true));
          });
      return;
    }
    case wire::Opcode::kCompareAndSet:
    case wire::Opcode::kIncrement: {
      // On a shard its read runs with device reads refused: one that needed
      // the device writes nothing and runs again on the pool (its read, in
      // the region's write order, must not block the shard).
      decision = std::make_shared<ConditionalOutcome>();
      auto needs_device = std::make_shared<bool>(false);
      const auto decide = [&](replication::Record* record,
                              bool* wrote) -> Status {
        return DecideConditional(request, region, on_shard, decision.get(),
                                 record, wrote, needs_device.get());
      };
      if (replicating == nullptr) {
        {
          std::lock_guard<std::mutex> stripe(
              write_stripes_[std::hash<std::string_view>{}(request.key) %
                             kWriteStripes]);
          replication::Record record;
          bool wrote = false;
          status = decide(&record, &wrote);
        }
        if (*needs_device) {
          pass.Release();
          Defer(request, std::move(respond));
          return;
        }
        result.applied = decision->applied;
        if (decision->current) result.current = *decision->current;
        result.counter = decision->counter;
        result.lsn = decision->lsn;
        break;
      }
      // Answered once the backups hold what it wrote, or what it read; a
      // decision that needed the device is answered by nobody here (its
      // refusal comes back at once, on this thread) and runs on the pool.
      auto answering = std::make_shared<Respond>(std::move(respond));
      replicating->WriteDecided(
          request.region_id, request.key, region, decide,
          [this, opcode = request.opcode, request_id = request.request_id,
           region_id = request.region_id, decision, needs_device,
           answering](Status held) {
            if (*needs_device) return;
            wire::Reply outcome;
            outcome.opcode = opcode;
            outcome.request_id = request_id;
            outcome.applied = decision->applied;
            if (decision->current) outcome.current = *decision->current;
            outcome.counter = decision->counter;
            outcome.lsn = decision->lsn;
            // A repeated answer wrote nothing: one that cannot be given
            // (the lease lapsed) is refused as a read's is.
            (*answering)(WriteAnswer(outcome, held, region_id,
                                     decision->applied && !decision->repeated));
          });
      if (*needs_device) {
        pass.Release();
        Defer(request, std::move(*answering));
      }
      return;
    }
    case wire::Opcode::kGet:
      status = region->Get(request.key, &value);
      result.value = value;
      break;
    case wire::Opcode::kScan: {
      std::optional<std::string> end;
      if (request.end) end.emplace(*request.end);
      if (placement.end && (!end || *placement.end < *end)) {
        end = placement.end;
      }
      auto iterator = region->NewIterator(std::move(end));
      if (request.key.empty() && placement.start.empty()) {
        iterator->SeekToFirst();
      } else {
        iterator->Seek(request.key.empty() ? std::string_view(placement.start)
                                           : request.key);
      }
      status = iterator->status();
      if (status.ok()) {
        status = iterator->ReadPairs(request.limit, request.max_bytes, &pairs);
      }
      for (const auto& pair : pairs)
        result.pairs.emplace_back(pair.key, pair.value);
      result.more = status.ok() && iterator->Valid();
      break;
    }
    case wire::Opcode::kScanReverse: {
      // From the last key below the end (clipped to the range's) down to
      // the start (clipped likewise), in descending order.
      std::optional<std::string> end;
      if (request.end) end.emplace(*request.end);
      if (placement.end && (!end || *placement.end < *end)) {
        end = placement.end;
      }
      const std::string_view lowest = request.key < placement.start
                                          ? std::string_view(placement.start)
                                          : request.key;
      std::optional<std::string> lower;
      if (!lowest.empty()) lower.emplace(lowest);
      auto iterator = region->NewIterator(std::move(end), std::move(lower));
      iterator->SeekToLast();
      status = iterator->status();
      if (status.ok()) {
        status = iterator->ReadPairs(request.limit, request.max_bytes, &pairs,
                                     /*backward=*/true);
      }
      for (const auto& pair : pairs)
        result.pairs.emplace_back(pair.key, pair.value);
      result.more = status.ok() && iterator->Valid();
      break;
    }
    case wire::Opcode::kMultiGet: {
      // Answer keys in order until the reply would grow past its bound;
      // the client asks again for the rest.
      size_t bytes = 0;
      values.reserve(request.keys.size());
      for (const std::string_view key : request.keys) {
        std::string one;
        const Status got = region->Get(key, &one);
        if (!got.ok() && !got.IsNotFound()) {
          status = got;
          break;
        }
        if (bytes + one.size() + 8 > kReplyBudgetBytes && !values.empty())
          break;
        bytes += one.size() + 8;
        found.push_back(got.ok());
        values.push_back(std::move(one));
      }
      for (size_t i = 0; i < values.size(); ++i) {
        result.values.push_back(found[i]
                                    ? std::optional<std::string_view>(values[i])
                                    : std::nullopt);
      }
      break;
    }
  }
  const bool refused = refusing.has_value() && refusing->refused();
  refusing.reset();
  if (refused) {
    pass.Release();
    Defer(request, std::move(respond));
    return;
  }
  // A group with no backup holding its writes (replication/replicator.h,
  // "alone") answers a read once what it may have seen is on disk: no crash
  // of this server alone takes back a value a client saw.
  if (!write && (status.ok() || status.IsNotFound()) &&
      replicating != nullptr && replicating->Alone(request.region_id)) {
    const Status synced = region->Sync();
    if (!synced.ok()) {
      status = Status::IoError("region " + std::to_string(request.region_id) +
                               ": no backup holds its writes and syncing them "
                               "failed: " +
                               std::string(synced.message()));
    }
  }
  pass.Release();  // the region is read: waiting for backups needs it not
  if (status.ok()) wire::EncodeReply(result, &reply);
  // Answers the read once `held` says what it saw is safe to show.
  auto answer = [this, write, opcode = request.opcode,
                 request_id = request.request_id, region_id = request.region_id,
                 status, reply = std::move(reply),
                 respond = std::move(respond)](Status held) mutable {
    Status outcome = status;
    if ((outcome.ok() || outcome.IsNotFound()) && !held.ok()) outcome = held;
    // A read answers only under the lease (it may have waited past it); a
    // write (unreplicated here) applied already.
    if (!write && !LeaseHeld()) outcome = LeaseLapsed(region_id);
    if (!outcome.ok()) {
      wire::Request header;
      header.opcode = opcode;
      header.request_id = request_id;
      reply.clear();
      Fail(header, outcome, &reply);
    }
    respond(std::move(reply));
  };
  // A read answers only what every required backup holds: a value a
  // failover could take back is never shown (Replicator::AwaitReadAsync). It
  // waits without blocking its thread: the reply goes when they do.
  if (!write && (status.ok() || status.IsNotFound()) &&
      replicating != nullptr) {
    std::optional<std::vector<std::string_view>> keys;
    if (request.opcode == wire::Opcode::kGet) {
      keys.emplace(1, request.key);  // a key not found may be one deleted
    } else if (request.opcode == wire::Opcode::kMultiGet) {
      keys.emplace(
          request.keys.begin(),
          request.keys.begin() + static_cast<std::ptrdiff_t>(values.size()));
    }
    replicating->AwaitReadAsync(request.region_id, std::move(keys),
                                std::move(answer));
    return;
  }
  answer(Status::Ok());
}

void RegionService::RequireLease() {
  lease_required_.store(true, std::memory_order_release);
}

void RegionService::RenewLease(int64_t valid_for_ns) {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  // Never 0, which means "none granted yet": a lapsed lease is one in the
  // past. A renewal means a lease is enforced from now on.
  lease_required_.store(true, std::memory_order_release);
  lease_deadline_ns_.store(std::max<int64_t>(1, now + valid_for_ns),
                           std::memory_order_release);
}

bool RegionService::LeaseHeld() const {
  if (!lease_required_.load(std::memory_order_acquire)) return true;
  // Before the first renewal the deadline is 0: nothing is served until a
  // lease was granted (a primary whose first renewal failed is unfenced
  // otherwise).
  const int64_t deadline = lease_deadline_ns_.load(std::memory_order_acquire);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
             .count() < deadline;
}

Status RegionService::LeaseLapsed(uint64_t region_id) {
  return Status::FromCode(
      Status::Code::kNotPrimary,
      "region " + std::to_string(region_id) +
          ": this server's lease on its cluster membership lapsed (it may no "
          "longer be the primary)");
}

}  // namespace kvs::service
