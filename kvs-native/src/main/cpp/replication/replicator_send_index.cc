// The Replicator's Send-Index streams: the region's events in, log bytes,
// index segments and control messages out (replicator.h).

#include <algorithm>

#include "replication/replicator.h"
#include "replication/replicator_stream.h"
#include "util/thread_cpu.h"

namespace kvs::replication {
namespace {

using Event = StreamEvent;

constexpr log::LogKind kLogKinds[kSendIndexLogs] = {
    log::LogKind::kSmall, log::LogKind::kLarge, log::LogKind::kMedium};

size_t LogIndex(log::LogKind kind) {
  return static_cast<size_t>(kind) - static_cast<size_t>(log::LogKind::kSmall);
}

}  // namespace

void Replicator::Queue(uint64_t engine_region_id, StreamEvent&& event) {
  std::shared_ptr<Stream> stream;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = by_engine_region_.find(engine_region_id);
    if (it == by_engine_region_.end()) return;
    stream = it->second;
  }
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    if (!stream->live || !stream->failure.ok()) return;
    event.ticket = stream->next_ticket++;
    last_queued_ticket = event.ticket;
    stream->events.push_back(std::move(event));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  work_.notify_all();
}

void Replicator::OnLogAppend(uint64_t engine_region_id, log::LogKind kind,
                             const log::AppendedBytes& appended) {
  // Without a Send-Index stream every event is dropped: build no copy.
  if (send_index_streams_.load(std::memory_order_relaxed) == 0) return;
  Queue(engine_region_id, Event::LogBytes(kind, appended));
}

void Replicator::OnIndexSegment(uint64_t engine_region_id, uint64_t segment,
                                std::string_view bytes) {
  if (send_index_streams_.load(std::memory_order_relaxed) == 0) return;
  const uint64_t start = ThreadCpuNanos();
  Queue(engine_region_id, Event::IndexSegment(segment, bytes));
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.index_cpu_ns += ThreadCpuNanos() - start;
}

void Replicator::OnLogReleased(
    uint64_t engine_region_id, log::LogKind kind,
    const std::vector<log::ReleasedSegment>& released) {
  if (send_index_streams_.load(std::memory_order_relaxed) == 0) return;
  Queue(engine_region_id, Event::Trim(kind, released));
}

void Replicator::OnLevelInstalled(uint64_t engine_region_id, size_t level,
                                  const lsm::LevelDescriptor& descriptor,
                                  std::optional<size_t> emptied) {
  if (send_index_streams_.load(std::memory_order_relaxed) == 0) return;
  Queue(engine_region_id, Event::InstallLevel(level, descriptor, emptied));
}

bool Replicator::SendIndexControl(Stream* stream, const IndexControl& control,
                                  size_t* pending,
                                  std::unique_lock<std::mutex>* lock) {
  static const char* const kNames[] = {"FLUSH-TAIL", "SHIP-SEGMENT",
                                       "INSTALL-LEVEL", "TRIM"};
  std::string message;
  EncodeIndexControl(control, &message);
  return SendToBackups(
      stream, message,
      kNames[static_cast<size_t>(control.type) -
             static_cast<size_t>(IndexControlType::kFlushTail)],
      pending, lock);
}

bool Replicator::SendFlushTail(Stream* stream, size_t log, bool sealed,
                               std::unique_lock<std::mutex>* lock) {
  Stream::LogState& state = stream->logs[log];
  IndexControl control;
  control.type = IndexControlType::kFlushTail;
  control.region_id = stream->region_id;
  control.epoch = stream->epoch;
  control.kind = kLogKinds[log];
  control.sealed = sealed;
  control.starts = state.started;
  control.buffer = static_cast<uint32_t>(state.parity);
  control.chain_index = state.chain_index;
  control.primary_segment = state.segment;
  control.bytes = static_cast<uint32_t>(state.end);
  if (!SendIndexControl(stream, control, &state.flushes_pending[state.parity],
                        lock)) {
    return false;
  }
  state.started = false;
  state.flushed = state.end;
  std::lock_guard<std::mutex> stats_lock(mutex_);
  stats_.flushes += stream->targets.size();
  return true;
}

bool Replicator::PumpSendIndex(Stream* stream) {
  const size_t backups = stream->targets.size();
  bool progressed = false;
  uint64_t log_bytes = 0;  // counted once per pass, not per event
  std::unique_lock<std::mutex> lock(stream->mutex);
  // Nothing in flight: every write completed, every message answered.
  const auto quiet = [&] {
    if (!stream->batches.empty() || stream->index_replies_pending > 0) {
      return false;
    }
    for (const Stream::LogState& log : stream->logs) {
      if (log.flushes_pending[0] > 0 || log.flushes_pending[1] > 0) {
        return false;
      }
    }
    return true;
  };
  // FLUSH-TAIL of the large and medium tails an index segment may point
  // into; true if any was sent (the caller waits for the replies).
  bool failed = false;
  const auto flush_tails = [&](std::initializer_list<log::LogKind> kinds) {
    bool sent = false;
    for (const log::LogKind kind : kinds) {
      Stream::LogState& log = stream->logs[LogIndex(kind)];
      if (log.active && log.end > log.flushed) {
        if (!SendFlushTail(stream, LogIndex(kind), /*sealed=*/false, &lock)) {
          failed = true;
          return true;
        }
        sent = true;
      }
    }
    return sent;
  };
  const auto add_bytes = [&](size_t buffer, uint64_t offset,
                             std::string_view bytes, uint64_t ticket) {
    if (!stream->batches.empty()) {
      Stream::Batch& last = *stream->batches.back();
      const bool unposted = std::none_of(last.posted.begin(), last.posted.end(),
                                         [](bool posted) { return posted; });
      if (unposted && last.buffer == buffer &&
          last.offset + last.bytes.size() == offset &&
          last.bytes.size() + bytes.size() <= options_.batch_bytes_max) {
        last.bytes.append(bytes);
        last.last_ticket = ticket;
        return;
      }
    }
    auto batch = std::make_shared<Stream::Batch>();
    batch->buffer = buffer;
    batch->offset = offset;
    batch->bytes = bytes;
    batch->last_ticket = ticket;
    batch->posted.assign(backups, false);
    stream->batches.push_back(std::move(batch));
  };

  for (bool moved = true; moved;) {
    if (!PostBatches(stream, &lock, &progressed)) return false;
    moved = false;
    while (!stream->events.empty()) {
      Event& event = stream->events.front();
      if (event.type == Event::Type::kLogBytes) {
        const size_t index = LogIndex(event.kind);
        Stream::LogState& log = stream->logs[index];
        // Bytes at offset 0 start a segment (its header), even one of the
        // same number and chain index: compactions restart the medium
        // log's chain, and a freed segment may be reserved again at once.
        if (log.active &&
            (event.segment != log.segment ||
             event.chain_index != log.chain_index || event.offset == 0)) {
          // The segment is done: the backups persist it once its bytes
          // are there, while the next one fills the other buffer.
          if (!stream->batches.empty()) break;
          if (!SendFlushTail(stream, index, /*sealed=*/true, &lock)) {
            return false;
          }
          log.active = false;
        }
        if (!log.active) {
          const size_t parity = event.chain_index % 2;
          if (log.flushes_pending[parity] > 0) break;  // still persisting
          log.active = true;
          log.segment = event.segment;
          log.chain_index = event.chain_index;
          log.parity = parity;
          log.end = 0;
          log.flushed = 0;
          log.started = true;
        }
        if (event.offset + event.bytes.size() > kBufferBytes) {
          lock.unlock();
          Fail(stream, Status::Corruption("log bytes past a segment's end"));
          return false;
        }
        add_bytes(LogBuffer(event.kind, log.parity), event.offset, event.bytes,
                  event.ticket);
        log.end =
            std::max<uint64_t>(log.end, event.offset + event.bytes.size());
        log_bytes += event.bytes.size() * backups;
      } else {
        // An index segment or a level: after everything before it landed,
        // with the log tails it may point into persisted.
        if (!quiet()) break;
        const uint64_t cpu_start = ThreadCpuNanos();
        const auto count_cpu = [&] {
          std::lock_guard<std::mutex> stats_lock(mutex_);
          stats_.index_cpu_ns += ThreadCpuNanos() - cpu_start;
        };
        const bool sent =
            flush_tails({log::LogKind::kLarge, log::LogKind::kMedium});
        if (failed) return false;
        if (sent) {
          count_cpu();
          progressed = true;
          break;
        }
        if (event.type == Event::Type::kIndexSegment) {
          if (!stream->index_posted) {
            add_bytes(kIndexBuffer, 0, event.bytes, event.ticket);
            stream->index_posted = true;
            moved = true;
            count_cpu();
            break;  // SHIP-SEGMENT once the bytes are there
          }
          IndexControl control;
          control.type = IndexControlType::kShipSegment;
          control.region_id = stream->region_id;
          control.epoch = stream->epoch;
          control.primary_segment = event.segment;
          control.bytes = static_cast<uint32_t>(event.bytes.size());
          if (!SendIndexControl(stream, control, &stream->index_replies_pending,
                                &lock)) {
            return false;
          }
          stream->index_posted = false;
          count_cpu();
          std::lock_guard<std::mutex> stats_lock(mutex_);
          stats_.index_bytes += event.bytes.size() * backups;
          stats_.index_messages += backups;
        } else if (event.type == Event::Type::kTrim) {
          // After the levels that stopped pointing at the segments.
          IndexControl control;
          control.type = IndexControlType::kTrim;
          control.region_id = stream->region_id;
          control.epoch = stream->epoch;
          for (size_t at = 0; at < event.trimmed.size();
               at += kTrimSegmentsMax) {
            control.trimmed.assign(
                event.trimmed.begin() + static_cast<long>(at),
                event.trimmed.begin() +
                    static_cast<long>(
                        std::min(event.trimmed.size(), at + kTrimSegmentsMax)));
            if (!SendIndexControl(stream, control,
                                  &stream->index_replies_pending, &lock)) {
              return false;
            }
          }
          count_cpu();
        } else {
          IndexControl control;
          control.type = IndexControlType::kInstallLevel;
          control.region_id = stream->region_id;
          control.epoch = stream->epoch;
          control.level = static_cast<uint32_t>(event.level);
          if (event.emptied) {
            control.emptied = static_cast<uint32_t>(*event.emptied);
          }
          control.descriptor = event.descriptor;
          if (!SendIndexControl(stream, control, &stream->index_replies_pending,
                                &lock)) {
            return false;
          }
          count_cpu();
          std::lock_guard<std::mutex> stats_lock(mutex_);
          stats_.index_messages += backups;
        }
      }
      stream->events.pop_front();
      progressed = true;
      moved = true;
    }
  }
  if (log_bytes > 0) {
    std::lock_guard<std::mutex> stats_lock(mutex_);
    stats_.bytes += log_bytes;
  }
  if (stream->closing && stream->events.empty() && quiet()) {
    // The tails, so the backups hold every byte acknowledged.
    const bool sent = flush_tails(
        {log::LogKind::kSmall, log::LogKind::kLarge, log::LogKind::kMedium});
    if (failed) return false;
    if (sent) return true;
    stream->state = Stream::State::kClosed;
    stream->changed.notify_all();
    return true;
  }
  return progressed;
}

}  // namespace kvs::replication
