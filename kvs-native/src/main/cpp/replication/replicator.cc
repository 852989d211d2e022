#include "replication/replicator.h"

#include <sched.h>
#include <sys/prctl.h>

#include <array>
#include <deque>
#include <utility>

#include "replication/replicator_stream.h"
#include "util/thread_name.h"

namespace kvs::replication {
namespace {

using Clock = std::chrono::steady_clock;

// How long the replication thread naps while backups complete its writes.
constexpr std::chrono::microseconds kWaitNap{20};

}  // namespace

// The ticket of the last Send-Index event this thread queued.
thread_local uint64_t last_queued_ticket = 0;

namespace {}  // namespace

Replicator::Replicator(ReplicatorOptions options)
    : options_(std::move(options)), thread_([this] {
        SetThreadName(kThreadReplication);
        Run();
      }) {}

Replicator::~Replicator() {
  CloseAll();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    work_.notify_all();
  }
  thread_.join();
}

void Replicator::CloseAll() {
  std::vector<uint64_t> regions;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [region_id, stream] : streams_) {
      regions.push_back(region_id);
    }
  }
  for (const uint64_t region_id : regions) {
    (void)Close(region_id);
  }
}

void Replicator::Abandon(uint64_t region_id, const std::string& why) {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = streams_.find(region_id);
    if (it == streams_.end()) return;
    stream = it->second;
    streams_.erase(it);
    for (auto engine = by_engine_region_.begin();
         engine != by_engine_region_.end();) {
      engine = engine->second == stream ? by_engine_region_.erase(engine)
                                        : std::next(engine);
    }
    send_index_streams_.store(by_engine_region_.size());
  }
  std::lock_guard<std::mutex> order(stream->order);  // no write in between
  Fail(stream.get(), Status::Closed(why));
}

void Replicator::Open(uint64_t region_id, uint64_t epoch,
                      std::vector<BackupTarget> backups, ReplicationMode mode,
                      lsm::Region* region) {
  if (mode == ReplicationMode::kSendIndex) {
    // The new stream's catch-up ships the region's whole state to every
    // backup: the old one need not hand anything over (and must not wait
    // for backups that may be gone).
    Abandon(region_id,
            "the region is reopened at epoch " + std::to_string(epoch));
  } else {
    (void)Close(region_id);
  }
  auto stream = std::make_shared<Stream>();
  stream->region_id = region_id;
  stream->epoch = epoch;
  stream->mode = mode;
  stream->targets = std::move(backups);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_[region_id] = stream;
    if (mode == ReplicationMode::kSendIndex) {
      by_engine_region_[region->id()] = stream;
      send_index_streams_.store(by_engine_region_.size());
    }
  }
  if (mode == ReplicationMode::kSendIndex) {
    // The catch-up: the region's state, then (from `then` on, with the
    // region still held off) its events, so none is missed or doubled.
    lsm::StateVisitor visitor;
    auto queue = [&](Stream::Event&& event) {
      std::lock_guard<std::mutex> lock(stream->mutex);
      stream->Push(std::move(event));
    };
    visitor.log_bytes = [&](log::LogKind kind,
                            const log::AppendedBytes& appended) {
      queue(Stream::Event::LogBytes(kind, appended));
    };
    visitor.index_segment = [&](uint64_t segment, std::string_view bytes) {
      queue(Stream::Event::IndexSegment(segment, bytes));
    };
    visitor.level = [&](size_t level, const lsm::LevelDescriptor& descriptor,
                        uint64_t compacted_lsn) {
      queue(Stream::Event::InstallLevel(level, descriptor, std::nullopt,
                                        compacted_lsn));
    };
    const Status reported = region->ReportState(visitor, [&] {
      std::lock_guard<std::mutex> lock(stream->mutex);
      stream->live = true;
      stream->catch_up_ticket = stream->next_ticket - 1;
    });
    if (!reported.ok()) {
      Fail(stream.get(),
           Status::IoError("catch-up of region " + std::to_string(region_id) +
                           ": " + reported.ToString()));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  work_.notify_all();
}

bool Replicator::CaughtUp(uint64_t region_id) const {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = streams_.find(region_id);
    if (it == streams_.end()) return false;
    stream = it->second;
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (stream->state != Stream::State::kReady || !stream->failure.ok() ||
      stream->closing) {
    return false;
  }
  if (stream->mode != ReplicationMode::kSendIndex) return true;
  const std::deque<Stream::Event>& index = stream->lanes[Stream::kIndexLane];
  return stream->live && stream->done_ticket >= stream->catch_up_ticket &&
         (index.empty() || index.front().ticket > stream->catch_up_ticket) &&
         stream->index_replies_pending == 0;
}

bool Replicator::Failed(uint64_t region_id) const {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = streams_.find(region_id);
    if (it == streams_.end()) return false;
    stream = it->second;
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  return stream->state == Stream::State::kFailed || !stream->failure.ok();
}

bool Replicator::Replicates(uint64_t region_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return streams_.count(region_id) != 0;
}

Status Replicator::Close(uint64_t region_id) {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = streams_.find(region_id);
    if (it == streams_.end()) return Status::Ok();
    stream = it->second;
    work_.notify_all();
  }
  Status result;
  {
    std::lock_guard<std::mutex> order(stream->order);  // no write in between
    std::unique_lock<std::mutex> lock(stream->mutex);
    stream->closing = true;
    {
      std::lock_guard<std::mutex> work_lock(mutex_);
      work_.notify_all();
    }
    const bool done =
        stream->changed.wait_until(lock, Clock::now() + options_.timeout, [&] {
          return stream->state == Stream::State::kClosed ||
                 stream->state == Stream::State::kFailed;
        });
    if (!done) {
      result =
          Status::IoError("region " + std::to_string(region_id) +
                          ": backups did not take the last records in time");
    } else if (stream->state == Stream::State::kFailed) {
      result = stream->failure;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = streams_.find(region_id);
  if (it != streams_.end() && it->second == stream) streams_.erase(it);
  for (auto engine = by_engine_region_.begin();
       engine != by_engine_region_.end();) {
    engine = engine->second == stream ? by_engine_region_.erase(engine)
                                      : std::next(engine);
  }
  send_index_streams_.store(by_engine_region_.size());
  return result;
}

Status Replicator::Write(uint64_t region_id, const Record& record,
                         const std::function<Status()>& apply) {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = streams_.find(region_id);
    if (it != streams_.end()) stream = it->second;
  }
  if (stream == nullptr) return apply();
  uint64_t ticket = 0;
  {
    std::lock_guard<std::mutex> order(stream->order);
    {
      std::lock_guard<std::mutex> lock(stream->mutex);
      if (!stream->failure.ok()) return stream->failure;
      if (stream->closing) {
        return Status::Closed("region " + std::to_string(region_id) +
                              " is closing");
      }
    }
    if (stream->mode == ReplicationMode::kSendIndex) {
      // The region's log appends are queued as it makes them (Queue, on
      // this thread): wait for the last of them.
      last_queued_ticket = 0;
      KVS_RETURN_IF_ERROR(apply());
      ticket = last_queued_ticket;
    } else {
      KVS_RETURN_IF_ERROR(apply());
      std::string bytes;
      EncodeRecord(record, &bytes);
      std::lock_guard<std::mutex> lock(stream->mutex);
      ticket = stream->next_ticket++;
      stream->queue.push_back({ticket, std::move(bytes)});
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    work_.notify_all();
  }
  std::unique_lock<std::mutex> lock(stream->mutex);
  const bool done = stream->changed.wait_until(
      lock, Clock::now() + options_.timeout,
      [&] { return stream->done_ticket >= ticket || !stream->failure.ok(); });
  if (!stream->failure.ok()) return stream->failure;
  if (!done) {
    return Status::IoError("region " + std::to_string(region_id) +
                           ": backups did not take the write in time");
  }
  return Status::Ok();
}

ReplicatorStats Replicator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::shared_ptr<Replicator::Peer> Replicator::PeerFor(
    const BackupTarget& target, Status* status) {
  const std::string name = target.host + ":" + std::to_string(target.port);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = peers_.find(name);
    if (it != peers_.end() && it->second->client->health().ok()) {
      return it->second;
    }
  }
  channel::ClientOptions client_options;
  client_options.endpoint = options_.endpoint;
  // A backup busy applying a buffer (or a loaded machine) may leave writes
  // unprogressed for a while: that is backpressure up to the timeout, not a
  // dead peer.
  client_options.endpoint.post_timeout = std::chrono::duration_cast<
      decltype(client_options.endpoint.post_timeout)>(options_.timeout);
  client_options.request_timeout = options_.timeout;
  auto peer = std::make_shared<Peer>();
  peer->name = name;
  *status = channel::Client::Connect(client_options, target.host, target.port,
                                     &peer->client);
  if (!status->ok()) {
    *status = Status::IoError(
        "backup " + name + " unreachable: " + std::string(status->message()));
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  peers_[name] = peer;
  return peer;
}

void Replicator::Fail(Stream* stream, const Status& status) {
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (stream->failure.ok()) {
    stream->failure = Status::IoError(
        "region " + std::to_string(stream->region_id) +
        " replication failed: " + std::string(status.message()));
  }
  stream->state = Stream::State::kFailed;
  stream->changed.notify_all();
}

void Replicator::Run() {
  // Naps must be short: the default 50 us timer slack would stretch them.
  ::prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  while (true) {
    std::vector<std::shared_ptr<Stream>> streams;
    std::vector<std::shared_ptr<Peer>> peers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!running_) return;
      for (const auto& [region_id, stream] : streams_)
        streams.push_back(stream);
      for (const auto& [name, peer] : peers_) peers.push_back(peer);
    }
    bool busy = false;
    bool waiting = false;  // for backups to complete writes or answer
    for (const auto& stream : streams) busy |= Pump(stream.get());
    for (const auto& peer : peers) {
      if (peer->client->health().ok()) {
        busy |= peer->client->Poll() > 0;
        waiting |= peer->client->outstanding() > 0 ||
                   peer->client->writes_in_flight() > 0;
      }
    }
    if (busy) continue;
    if (waiting) {
      // The backups' progress, not ours, completes what is in flight: give
      // them the core (with fewer cores than spinning threads, yielding
      // kept it from them) and look again shortly.
      std::this_thread::sleep_for(kWaitNap);
      continue;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    work_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

bool Replicator::SendToBackups(Stream* stream, const std::string& message,
                               const std::string& what, size_t* pending,
                               std::unique_lock<std::mutex>* lock) {
  const size_t backups = stream->targets.size();
  *pending += backups;
  for (size_t i = 0; i < backups; ++i) {
    Peer* peer = stream->peers[i].get();
    const Status submitted = peer->client->Submit(
        message, [this, weak = stream->weak_from_this(), peer, pending, what](
                     Status status, std::string_view reply) {
          // A stream gone meanwhile (closed, replaced) cares no more; a
          // strong reference here would keep it, and through its peers
          // this callback, alive for ever.
          const std::shared_ptr<Stream> owner = weak.lock();
          if (owner == nullptr) return;
          Stream* const live = owner.get();
          ControlReply decoded;
          if (status.ok()) status = DecodeControlReply(reply, &decoded);
          if (status.ok()) status = decoded.status;
          if (!status.ok()) {
            Fail(live, Status::IoError("backup " + peer->name + " refused " +
                                       what + ": " + status.ToString()));
            return;
          }
          std::lock_guard<std::mutex> reply_lock(live->mutex);
          --*pending;
          live->changed.notify_all();
        });
    if (!submitted.ok()) {
      lock->unlock();
      Fail(stream, Status::IoError("backup " + peer->name + ": " +
                                   submitted.ToString()));
      return false;
    }
  }
  return true;
}

bool Replicator::SendFlush(Stream* stream, std::unique_lock<std::mutex>* lock) {
  std::string flush;
  EncodeControl({ControlType::kFlush, stream->region_id, stream->epoch,
                 static_cast<uint32_t>(stream->filling),
                 static_cast<uint32_t>(stream->offset), stream->sequence},
                &flush);
  if (!SendToBackups(stream, flush, "FLUSH", &stream->flush_pending, lock)) {
    return false;
  }
  std::lock_guard<std::mutex> stats_lock(mutex_);
  stats_.flushes += stream->targets.size();
  return true;
}

bool Replicator::Connect(Stream* stream) {
  Stream::State state;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    state = stream->state;
  }
  const size_t backups = stream->targets.size();
  const size_t buffers = stream->mode == ReplicationMode::kSendIndex
                             ? kSendIndexBuffers
                             : kBuffers;
  if (state == Stream::State::kOpening) {
    if (stream->opens_pending > 0) return false;
    std::lock_guard<std::mutex> lock(stream->mutex);
    if (stream->state == Stream::State::kOpening) {
      stream->state = Stream::State::kReady;
    }
    return true;
  }
  if (stream->peers.empty()) {
    stream->buffers.assign(backups, {});
    for (const BackupTarget& target : stream->targets) {
      Status status;
      auto peer = PeerFor(target, &status);
      if (peer == nullptr) {
        Fail(stream, status);
        return false;
      }
      stream->peers.push_back(std::move(peer));
    }
  }
  for (const auto& peer : stream->peers) {
    if (!peer->client->health().ok()) {
      Fail(stream, Status::IoError("backup " + peer->name + ": " +
                                   peer->client->health().ToString()));
      return false;
    }
    // The region's earlier stream on this connection still has writes in
    // flight into the buffers this OPEN will reuse: wait for them (a write
    // never completed breaks the connection within the timeout).
    const auto writing = peer->writes_in_flight.find(stream->region_id);
    if (writing != peer->writes_in_flight.end() && writing->second > 0) {
      return false;
    }
  }
  // OPEN's buffer field names the mode (replication_format.h).
  std::string open;
  EncodeControl({ControlType::kOpen, stream->region_id, stream->epoch,
                 static_cast<uint32_t>(stream->mode), 0, 0},
                &open);
  stream->opens_pending = backups;
  for (size_t i = 0; i < backups; ++i) {
    Peer* peer = stream->peers[i].get();
    const Status submitted = peer->client->Submit(
        open, [this, weak = stream->weak_from_this(), i, peer, buffers](
                  Status status, std::string_view reply) {
          // A stream gone meanwhile (closed, replaced) cares no more; a
          // strong reference here would keep it, and through its peers
          // this callback, alive for ever.
          const std::shared_ptr<Stream> owner = weak.lock();
          if (owner == nullptr) return;
          Stream* const live = owner.get();
          ControlReply decoded;
          if (status.ok()) status = DecodeControlReply(reply, &decoded);
          if (status.ok()) status = decoded.status;
          if (status.ok() && decoded.buffers.size() != buffers) {
            status = Status::Corruption(
                "OPEN reply with " + std::to_string(decoded.buffers.size()) +
                " buffers, not " + std::to_string(buffers));
          }
          if (!status.ok()) {
            Fail(live, Status::IoError("backup " + peer->name +
                                       " refused OPEN: " + status.ToString()));
            return;
          }
          live->buffers[i] = decoded.buffers;
          --live->opens_pending;
        });
    if (!submitted.ok()) {
      Fail(stream, Status::IoError("backup " + peer->name + ": " +
                                   submitted.ToString()));
      return false;
    }
  }
  std::lock_guard<std::mutex> lock(stream->mutex);
  stream->state = Stream::State::kOpening;
  return true;
}

bool Replicator::PostBatches(Stream* stream, std::unique_lock<std::mutex>* lock,
                             bool* progressed) {
  const size_t backups = stream->targets.size();
  for (const auto& batch : stream->batches) {
    for (size_t i = 0; i < backups; ++i) {
      if (batch->posted[i]) continue;
      Peer* peer = stream->peers[i].get();
      const uint64_t region_id = stream->region_id;
      const Status posted = peer->client->WriteRemote(
          stream->buffers[i][batch->buffer], batch->offset, batch->bytes,
          [this, weak = stream->weak_from_this(), batch, peer, region_id,
           backups](Status status) {
            const auto writing = peer->writes_in_flight.find(region_id);
            if (writing != peer->writes_in_flight.end() &&
                --writing->second == 0) {
              peer->writes_in_flight.erase(writing);
            }
            // A stream gone meanwhile cares no more (see SendToBackups).
            const std::shared_ptr<Stream> owner = weak.lock();
            if (owner == nullptr) return;
            Stream* const live = owner.get();
            if (!status.ok()) {
              Fail(live, Status::IoError("write to backup " + peer->name +
                                         " failed: " + status.ToString()));
              return;
            }
            std::lock_guard<std::mutex> done_lock(live->mutex);
            ++batch->completions;
            while (!live->batches.empty() &&
                   live->batches.front()->completions == backups) {
              const Stream::Batch& landed = *live->batches.front();
              if (live->mode == ReplicationMode::kBuildIndex) {
                live->done_ticket =
                    std::max(live->done_ticket, landed.last_ticket);
              } else if (landed.lane < kSendIndexLogs) {
                Stream::LogState& log = live->logs[landed.lane];
                --log.batches;
                log.landed = std::max<uint64_t>(
                    log.landed, landed.offset + landed.bytes.size());
              }
              live->batches.pop_front();
            }
            if (live->mode == ReplicationMode::kSendIndex) {
              live->done_ticket = live->FirstLogTicketPending() - 1;
            }
            live->changed.notify_all();
          });
      if (posted.IsBusy()) return true;  // a full staging buffer: later
      if (!posted.ok()) {
        lock->unlock();
        Fail(stream, Status::IoError("backup " + peer->name + ": " +
                                     posted.ToString()));
        return false;
      }
      batch->posted[i] = true;
      ++peer->writes_in_flight[region_id];
      *progressed = true;
      std::lock_guard<std::mutex> stats_lock(mutex_);
      ++stats_.writes;
    }
  }
  return true;
}

bool Replicator::Pump(Stream* stream) {
  Stream::State state;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    state = stream->state;
  }
  switch (state) {
    case Stream::State::kClosed:
    case Stream::State::kFailed:
      return false;
    case Stream::State::kConnecting:
    case Stream::State::kOpening:
      return Connect(stream);
    case Stream::State::kReady:
      break;
  }
  for (const auto& peer : stream->peers) {
    if (!peer->client->health().ok()) {
      Fail(stream, Status::IoError("backup " + peer->name + ": " +
                                   peer->client->health().ToString()));
      return false;
    }
  }
  if (stream->mode == ReplicationMode::kSendIndex) {
    return PumpSendIndex(stream);
  }
  const size_t backups = stream->targets.size();
  bool progressed = false;
  std::unique_lock<std::mutex> lock(stream->mutex);
  // Post batches not yet posted on every backup (a full staging buffer
  // makes a write wait), then batch what is queued and post that at once.
  for (bool batched = true; batched;) {
    if (!PostBatches(stream, &lock, &progressed)) return false;
    batched = false;
    while (!stream->queue.empty()) {
      const size_t next = stream->queue.front().bytes.size();
      if (stream->offset + next > kBufferBytes) {
        if (stream->flush_pending > 0 || !stream->batches.empty()) break;
        // Hand the full buffer over; fill the other one.
        if (!SendFlush(stream, &lock)) return false;
        ++stream->sequence;
        stream->filling = (stream->filling + 1) % kBuffers;
        stream->offset = 0;
        progressed = true;
        continue;
      }
      auto batch = std::make_shared<Stream::Batch>();
      batch->buffer = stream->filling;
      batch->offset = stream->offset;
      batch->posted.assign(backups, false);
      uint64_t records = 0;
      while (!stream->queue.empty()) {
        Stream::Queued& queued = stream->queue.front();
        if (stream->offset + batch->bytes.size() + queued.bytes.size() >
                kBufferBytes ||
            (!batch->bytes.empty() &&
             batch->bytes.size() + queued.bytes.size() >
                 options_.batch_bytes_max)) {
          break;
        }
        batch->bytes += queued.bytes;
        batch->last_ticket = queued.ticket;
        stream->queue.pop_front();
        ++records;
      }
      stream->offset += batch->bytes.size();
      stream->batches.push_back(batch);
      {
        std::lock_guard<std::mutex> stats_lock(mutex_);
        stats_.records += records;
        stats_.bytes += batch->bytes.size() * backups;
      }
      progressed = true;
      batched = true;
    }
  }
  if (stream->closing && stream->queue.empty() && stream->batches.empty() &&
      stream->flush_pending == 0) {
    if (stream->offset > 0) {
      // The last, partial buffer: the backups apply it.
      if (!SendFlush(stream, &lock)) return false;
      ++stream->sequence;
      stream->offset = 0;
      return true;
    }
    stream->state = Stream::State::kClosed;
    stream->changed.notify_all();
    return true;
  }
  return progressed;
}

}  // namespace kvs::replication
