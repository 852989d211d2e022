// The Replicator's Send-Index streams: the region's events in, log bytes,
// index segments and control messages out (replicator.h).

#include <algorithm>

#include "replication/replicator.h"
#include "replication/replicator_stream.h"
#include "util/thread_cpu.h"
#include "util/turns.h"

namespace kvs::replication {
namespace {

using Event = StreamEvent;

constexpr log::LogKind kLogKinds[kSendIndexLogs] = {
    log::LogKind::kSmall, log::LogKind::kLarge, log::LogKind::kMedium};

size_t LogIndex(log::LogKind kind) {
  return static_cast<size_t>(kind) - static_cast<size_t>(log::LogKind::kSmall);
}

}  // namespace

void Replicator::Stream::Push(Event event, uint64_t ticket) {
  event.ticket = ticket;
  const size_t lane = event.type == Event::Type::kLogBytes
                          ? LogIndex(event.kind)
                          : Stream::kIndexLane;
  queued_bytes += event.bytes.size();
  lanes[lane].push_back(std::move(event));
  if (lanes[lane].back().unloaded) to_load.push_back(&lanes[lane].back());
}

void Replicator::Stream::Sent(const Event& event) {
  queued_bytes -= std::min<uint64_t>(queued_bytes, event.bytes.size());
  if (event.from_device) {
    loaded_bytes -= std::min<uint64_t>(loaded_bytes, event.bytes.size());
  }
}

uint64_t Replicator::Stream::FirstTicketPending() const {
  uint64_t first = group->next_ticket;
  for (size_t lane = 0; lane < kSendIndexLogs; ++lane) {
    if (!lanes[lane].empty())
      first = std::min(first, lanes[lane].front().ticket);
  }
  if (!queue.empty()) first = std::min(first, queue.front().ticket);
  for (const auto& batch : batches) {
    if (group->mode == ReplicationMode::kBuildIndex ||
        batch->lane < kSendIndexLogs) {
      first = std::min(first, batch->first_ticket);
    }
  }
  return first;
}

void Replicator::UpdateSync(Stream* stream) {
  if (stream->caught_up || !stream->live ||
      stream->state != Stream::State::kReady || !stream->failure.ok()) {
    return;
  }
  // Nor before the backup filled its buffers of resumed segments with its
  // copies (a promotion reads a buffer only from its segment header on).
  for (const Stream::LogState& log : stream->logs) {
    if (log.fill_at != 0 || log.flushes_pending[0] > 0 ||
        log.flushes_pending[1] > 0) {
      return;
    }
  }
  const std::deque<Event>& index = stream->lanes[Stream::kIndexLane];
  // The backup holds every log byte queued before the first still to land:
  // batches landing say so, and so does a catch-up of index events alone
  // (every copy held whole: no batch), once their replies came.
  stream->done_ticket =
      std::max(stream->done_ticket, stream->FirstTicketPending() - 1);
  if (stream->done_ticket < stream->catch_up_ticket ||
      (!index.empty() && index.front().ticket <= stream->catch_up_ticket) ||
      stream->index_replies_pending > 0) {
    return;
  }
  stream->caught_up = true;
  if (!stream->required) {
    // From now on every write waits for it; it is in sync once it holds
    // the writes acknowledged without it.
    stream->required = true;
    stream->in_sync_ticket = stream->group->next_ticket - 1;
  }
  stream->group->changed.notify_all();
}

void Replicator::Queue(uint64_t engine_region_id, StreamEvent&& event) {
  std::shared_ptr<Group> group;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = by_engine_region_.find(engine_region_id);
    if (it == by_engine_region_.end()) return;
    group = it->second;
  }
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    if (!group->ended.ok()) return;
    std::vector<Stream*> live;
    for (const auto& stream : group->streams) {
      if (!stream->live || !stream->Healthy()) continue;
      if (HasRoom(stream.get())) live.push_back(stream.get());
    }
    if (live.empty()) return;
    const uint64_t ticket = group->next_ticket++;
    for (size_t i = 0; i < live.size(); ++i) {
      if (i + 1 == live.size()) {
        live[i]->Push(std::move(event), ticket);
      } else {
        live[i]->Push(event, ticket);
      }
    }
    last_queued_ticket = ticket;
  }
  // A shard's write is posted by its Drive at the end of its turn; the
  // engine's own threads (compactions, flushes) wake the replication thread.
  if (EndsTurns()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  NotifyWorkLocked();
}

void Replicator::OnLogAppend(uint64_t engine_region_id, log::LogKind kind,
                             const log::AppendedBytes& appended) {
  // Without a Send-Index stream every event is dropped: build no copy.
  if (send_index_groups_.load(std::memory_order_relaxed) == 0) return;
  Queue(engine_region_id, Event::LogBytes(kind, appended));
}

void Replicator::OnIndexSegment(uint64_t engine_region_id, size_t level,
                                uint64_t segment, std::string_view bytes) {
  if (send_index_groups_.load(std::memory_order_relaxed) == 0) return;
  const uint64_t start = ThreadCpuNanos();
  Queue(engine_region_id, Event::IndexSegment(level, segment, bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.index_cpu_ns += ThreadCpuNanos() - start;
}

void Replicator::OnLogReleased(
    uint64_t engine_region_id, log::LogKind kind,
    const std::vector<log::ReleasedSegment>& released) {
  if (send_index_groups_.load(std::memory_order_relaxed) == 0) return;
  Queue(engine_region_id, Event::Trim(kind, released));
}

void Replicator::OnLevelInstalled(uint64_t engine_region_id, size_t level,
                                  const lsm::LevelDescriptor& descriptor,
                                  std::optional<size_t> emptied,
                                  uint64_t compacted_lsn) {
  if (send_index_groups_.load(std::memory_order_relaxed) == 0) return;
  Queue(engine_region_id,
        Event::InstallLevel(level, descriptor, emptied, compacted_lsn));
}

bool Replicator::SendIndexControl(Stream* stream, const IndexControl& control,
                                  size_t* pending,
                                  std::unique_lock<std::mutex>* lock) {
  static const char* const kNames[] = {"FLUSH-TAIL", "SHIP-SEGMENT",
                                       "INSTALL-LEVEL", "TRIM"};
  std::string message;
  EncodeIndexControl(control, &message);
  return SendToBackup(stream, message,
                      kNames[static_cast<size_t>(control.type) -
                             static_cast<size_t>(IndexControlType::kFlushTail)],
                      pending, lock);
}

bool Replicator::SendFlushTail(Stream* stream, size_t log, bool sealed,
                               std::unique_lock<std::mutex>* lock) {
  Stream::LogState& state = stream->logs[log];
  IndexControl control;
  control.type = IndexControlType::kFlushTail;
  control.region_id = stream->group->region_id;
  control.epoch = stream->group->epoch;
  control.kind = kLogKinds[log];
  control.sealed = sealed;
  control.starts = state.started;
  control.buffer = static_cast<uint32_t>(state.parity);
  control.chain_index = state.chain_index;
  control.primary_segment = state.segment;
  control.bytes = static_cast<uint32_t>(state.landed);
  if (!SendIndexControl(stream, control, &state.flushes_pending[state.parity],
                        lock)) {
    return false;
  }
  state.started = false;
  state.flushed = state.landed;
  std::lock_guard<std::mutex> stats_lock(mutex_);
  ++stats_.flushes;
  return true;
}

// The lanes: each log's bytes flow in order on their own lane, and the
// index events (segments, levels, trims) on theirs, one at a time (each
// waits for the replies to the one before). Between lanes, tickets order
// only what must be ordered:
// - an index event waits until every backup holds the log bytes queued
//   before it, with the large and medium tails persisted (FLUSH-TAIL), so
//   every pointer it carries translates;
// - log bytes that start a segment wait until the levels and trims queued
//   before them were answered: the segment's first FLUSH-TAIL drops older
//   copies of its number, which an installed level may still point into
//   until the backups installed the level that stopped doing so.
// Writes thus never wait behind an index shipment, except at a segment
// boundary while a level queued before it is installed.
bool Replicator::PumpSendIndex(Stream* stream) {
  Group* group = stream->group.get();
  bool progressed = false;
  uint64_t log_bytes = 0;  // counted once per pass, not per event
  std::unique_lock<std::mutex> lock(group->mutex);
  const auto flushes_pending = [&] {
    for (const Stream::LogState& log : stream->logs) {
      if (log.flushes_pending[0] > 0 || log.flushes_pending[1] > 0) {
        return true;
      }
    }
    return false;
  };
  // Whether a level or trim queued before `ticket` is still unanswered.
  const auto freeing_before = [&](uint64_t ticket) {
    if (stream->index_replies_pending > 0 && stream->freeing_ticket != 0 &&
        stream->freeing_ticket < ticket) {
      return true;
    }
    for (const Event& event : stream->lanes[Stream::kIndexLane]) {
      if (event.ticket > ticket) break;
      if (event.type != Event::Type::kIndexSegment) return true;
    }
    return false;
  };
  // FLUSH-TAIL of the landed bytes of `kinds`' tails; true if any was sent
  // (the caller waits for the replies).
  bool failed = false;
  const auto flush_tails = [&](std::initializer_list<log::LogKind> kinds) {
    bool sent = false;
    for (const log::LogKind kind : kinds) {
      Stream::LogState& log = stream->logs[LogIndex(kind)];
      if (log.active && log.landed > log.flushed) {
        if (!SendFlushTail(stream, LogIndex(kind), /*sealed=*/false, &lock)) {
          failed = true;
          return true;
        }
        sent = true;
      }
    }
    return sent;
  };
  // Each lane's batch still being filled in this pass (PostBatches posts
  // it after the pass): contiguous bytes of a lane join it.
  std::shared_ptr<Stream::Batch> open_batches[kSendIndexLogs + 1];
  const auto add_bytes = [&](size_t lane, size_t buffer, uint64_t offset,
                             std::string_view bytes, uint64_t ticket) {
    std::shared_ptr<Stream::Batch>& open = open_batches[lane];
    if (open != nullptr) {
      if (open->buffer == buffer &&
          open->offset + open->bytes.size() == offset &&
          open->bytes.size() + bytes.size() <= options_.batch_bytes_max) {
        open->bytes.append(bytes);
        open->last_ticket = ticket;
        return;
      }
    }
    auto batch = std::make_shared<Stream::Batch>();
    batch->lane = lane;
    batch->buffer = buffer;
    batch->offset = offset;
    batch->bytes = bytes;
    batch->first_ticket = ticket;
    batch->last_ticket = ticket;
    if (lane < kSendIndexLogs) ++stream->logs[lane].batches;
    open = batch;
    stream->batches.push_back(std::move(batch));
  };
  // Moves log `lane`'s events into batches while it may; false if the
  // stream failed.
  const auto pump_log = [&](size_t lane) {
    std::deque<Event>& events = stream->lanes[lane];
    Stream::LogState& log = stream->logs[lane];
    while (!events.empty()) {
      Event& event = events.front();
      if (event.unloaded) return true;  // the catch-up reader is on it
      // Bytes at offset 0 start a segment (its header), even one of the
      // same number and chain index: compactions restart the medium log's
      // chain, and a freed segment may be reserved again at once.
      const bool starts = !log.active || event.segment != log.segment ||
                          event.chain_index != log.chain_index ||
                          event.offset == 0;
      if (starts && freeing_before(event.ticket)) return true;
      if (log.active && starts) {
        // The segment is done: the backups persist it once its bytes are
        // there, while the next one fills the other buffer.
        if (log.batches > 0) return true;
        if (!SendFlushTail(stream, lane, /*sealed=*/true, &lock)) return false;
        log.active = false;
        progressed = true;
      }
      if (!log.active) {
        const size_t parity = event.chain_index % 2;
        if (log.flushes_pending[parity] > 0) return true;  // persisting
        log.active = true;
        log.segment = event.segment;
        log.chain_index = event.chain_index;
        log.parity = parity;
        log.landed = 0;
        log.flushed = 0;
        // A resumed copy is extended in place, never dropped first.
        log.started = !event.resumes;
        log.fill_at = event.resumes ? event.offset : 0;
      }
      if (event.offset + event.bytes.size() > kBufferBytes) {
        lock.unlock();
        Fail(stream, Status::Corruption("log bytes past a segment's end"));
        return false;
      }
      add_bytes(lane, LogBuffer(event.kind, log.parity), event.offset,
                event.bytes, event.ticket);
      log_bytes += event.bytes.size();
      stream->Sent(event);
      events.pop_front();
      progressed = true;
    }
    return true;
  };
  // Moves the index lane on by at most one event; false if the stream
  // failed.
  const auto pump_index = [&] {
    std::deque<Event>& events = stream->lanes[Stream::kIndexLane];
    const bool bytes_in_flight =
        std::any_of(stream->batches.begin(), stream->batches.end(),
                    [](const std::shared_ptr<Stream::Batch>& batch) {
                      return batch->lane == Stream::kIndexLane;
                    });
    if (events.empty() || stream->index_replies_pending > 0 ||
        bytes_in_flight) {
      return true;
    }
    Event& event = events.front();
    if (event.unloaded) return true;  // the catch-up reader is on it
    if (stream->FirstTicketPending() < event.ticket || flushes_pending()) {
      return true;
    }
    const uint64_t cpu_start = ThreadCpuNanos();
    const auto count_cpu = [&] {
      std::lock_guard<std::mutex> stats_lock(mutex_);
      stats_.index_cpu_ns += ThreadCpuNanos() - cpu_start;
    };
    const bool flushed =
        flush_tails({log::LogKind::kLarge, log::LogKind::kMedium});
    if (failed) return false;
    if (flushed) {
      count_cpu();
      progressed = true;
      return true;
    }
    IndexControl control;
    control.region_id = group->region_id;
    control.epoch = group->epoch;
    stream->freeing_ticket = 0;
    if (event.type == Event::Type::kIndexSegment) {
      if (!stream->index_posted) {
        add_bytes(Stream::kIndexLane, kIndexBuffer, 0, event.bytes,
                  event.ticket);
        stream->index_posted = true;
        count_cpu();
        progressed = true;
        return true;  // SHIP-SEGMENT once the bytes are there
      }
      control.type = IndexControlType::kShipSegment;
      control.level = static_cast<uint32_t>(event.level);
      control.primary_segment = event.segment;
      control.bytes = static_cast<uint32_t>(event.bytes.size());
      if (!SendIndexControl(stream, control, &stream->index_replies_pending,
                            &lock)) {
        return false;
      }
      stream->index_posted = false;
      std::lock_guard<std::mutex> stats_lock(mutex_);
      stats_.index_bytes += event.bytes.size();
      ++stats_.index_messages;
    } else if (event.type == Event::Type::kTrim) {
      control.type = IndexControlType::kTrim;
      for (size_t at = 0; at < event.trimmed.size(); at += kTrimSegmentsMax) {
        control.trimmed.assign(
            event.trimmed.begin() + static_cast<long>(at),
            event.trimmed.begin() +
                static_cast<long>(
                    std::min(event.trimmed.size(), at + kTrimSegmentsMax)));
        if (!SendIndexControl(stream, control, &stream->index_replies_pending,
                              &lock)) {
          return false;
        }
      }
      stream->freeing_ticket = event.ticket;
    } else {
      control.type = IndexControlType::kInstallLevel;
      control.level = static_cast<uint32_t>(event.level);
      if (event.emptied) {
        control.emptied = static_cast<uint32_t>(*event.emptied);
      }
      control.descriptor = event.descriptor;
      control.compacted_lsn = event.compacted_lsn;
      if (!SendIndexControl(stream, control, &stream->index_replies_pending,
                            &lock)) {
        return false;
      }
      stream->freeing_ticket = event.ticket;
      std::lock_guard<std::mutex> stats_lock(mutex_);
      ++stats_.index_messages;
    }
    count_cpu();
    stream->Sent(event);
    events.pop_front();
    progressed = true;
    return true;
  };

  // A resumed segment whose bytes landed: the FLUSH-TAIL that fills the
  // backup's buffer with its copy before them (LogState::fill_at).
  const auto fill_resumed = [&](size_t lane) {
    Stream::LogState& log = stream->logs[lane];
    if (!log.active || log.fill_at == 0 || log.landed <= log.fill_at) {
      return true;
    }
    log.fill_at = 0;
    if (!SendFlushTail(stream, lane, /*sealed=*/false, &lock)) return false;
    progressed = true;
    return true;
  };
  // Move every lane on; again while that batched or sent more.
  bool any = false;
  do {
    progressed = false;
    for (size_t lane = 0; lane < kSendIndexLogs; ++lane) {
      if (!pump_log(lane) || !fill_resumed(lane)) return false;
    }
    if (!pump_index()) return false;
    any |= progressed;
  } while (progressed);
  progressed = any;
  UpdateSync(stream);
  if (log_bytes > 0) {
    std::lock_guard<std::mutex> stats_lock(mutex_);
    stats_.bytes += log_bytes;
  }
  const bool lanes_empty =
      std::all_of(std::begin(stream->lanes), std::end(stream->lanes),
                  [](const std::deque<Event>& lane) { return lane.empty(); });
  if (group->closing && lanes_empty && stream->batches.empty() &&
      stream->index_replies_pending == 0 && !flushes_pending()) {
    // The tails, so the backups hold every byte acknowledged.
    const bool sent = flush_tails(
        {log::LogKind::kSmall, log::LogKind::kLarge, log::LogKind::kMedium});
    if (failed) return false;
    if (sent) return true;
    stream->state = Stream::State::kClosed;
    group->changed.notify_all();
    return true;
  }
  return progressed;
}

}  // namespace kvs::replication
