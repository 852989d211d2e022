#include "replication/send_index_sink.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "log/log_format.h"
#include "util/thread_cpu.h"

namespace kvs::replication {
namespace {

constexpr log::LogKind kKinds[kSendIndexLogs] = {
    log::LogKind::kSmall, log::LogKind::kLarge, log::LogKind::kMedium};

size_t KindIndex(log::LogKind kind) {
  return static_cast<size_t>(kind) - static_cast<size_t>(log::LogKind::kSmall);
}

}  // namespace

size_t LogBuffer(log::LogKind kind, size_t parity) {
  return KindIndex(kind) * 2 + parity;
}

Status SendIndexSink::Create(channel::Session* session, alloc::Volume* volume,
                             uint64_t region_id,
                             std::unique_ptr<SendIndexSink>* sink) {
  std::unique_ptr<SendIndexSink> created(new SendIndexSink());
  created->volume_ = volume;
  for (auto& buffer : created->buffers_) {
    KVS_RETURN_IF_ERROR(session->CreateReplicaBuffer(kBufferBytes, &buffer));
  }
  for (size_t i = 0; i < kSendIndexLogs; ++i) {
    KVS_RETURN_IF_ERROR(
        LogMirror::Open(volume, region_id, kKinds[i], &created->mirrors_[i]));
  }
  KVS_RETURN_IF_ERROR(
      IndexInstaller::Open(volume, region_id,
                           {created->Mirror(log::LogKind::kLarge),
                            created->Mirror(log::LogKind::kMedium)},
                           &created->installer_));
  // The stream starts from nothing: the primary ships its state first.
  KVS_RETURN_IF_ERROR(created->installer_->Clear());
  for (auto& mirror : created->mirrors_) {
    KVS_RETURN_IF_ERROR(mirror->Clear());
  }
  *sink = std::move(created);
  return Status::Ok();
}

LogMirror* SendIndexSink::Mirror(log::LogKind kind) const {
  return mirrors_[KindIndex(kind)].get();
}

std::vector<fabric::RemoteBuffer> SendIndexSink::buffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<fabric::RemoteBuffer> remotes;
  for (const auto& buffer : buffers_) remotes.push_back(buffer->remote());
  return remotes;
}

void SendIndexSink::Stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
}

Status SendIndexSink::Handle(const IndexControl& control) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_) {
    return Status::Closed("the send-index stream of this region is over");
  }
  const uint64_t start = ThreadCpuNanos();
  Status status;
  switch (control.type) {
    case IndexControlType::kFlushTail:
      status = FlushTail(control);
      stats_.log_cpu_ns += ThreadCpuNanos() - start;
      return status;
    case IndexControlType::kShipSegment:
      status = installer_->ReceiveSegment(
          control.primary_segment,
          std::string_view(buffers_[kIndexBuffer]->data(), control.bytes));
      if (status.ok()) ++stats_.segments;
      break;
    case IndexControlType::kInstallLevel:
      status = InstallLevel(control);
      break;
    case IndexControlType::kTrim: {
      std::vector<LogMirror::FreedSegment> freed[kSendIndexLogs];
      for (const TrimmedCopy& copy : control.trimmed) {
        freed[KindIndex(copy.kind)].push_back(
            {copy.primary_segment, copy.chain_index});
      }
      for (size_t i = 0; i < kSendIndexLogs && status.ok(); ++i) {
        if (!freed[i].empty()) status = mirrors_[i]->TrimFreed(freed[i]);
      }
      stats_.log_cpu_ns += ThreadCpuNanos() - start;
      return status;
    }
  }
  stats_.index_cpu_ns += ThreadCpuNanos() - start;
  return status;
}

Status SendIndexSink::InstallLevel(const IndexControl& control) {
  // Medium segments leave the levels when the primary frees them (merged
  // into the last level): their copies go with them.
  std::set<uint64_t> before;
  for (const auto& [level, descriptor] : installer_->levels()) {
    if (level == control.level || level == control.emptied) {
      before.insert(descriptor.medium_segments.begin(),
                    descriptor.medium_segments.end());
    }
  }
  KVS_RETURN_IF_ERROR(installer_->Install(control.level, control.descriptor,
                                          control.emptied,
                                          control.compacted_lsn, nullptr));
  ++stats_.levels;
  const auto installed = installer_->levels().find(control.level);
  if (installed != installer_->levels().end()) {
    for (const uint64_t segment : installed->second.medium_segments) {
      before.erase(segment);
    }
  }
  if (before.empty()) return Status::Ok();
  LogMirror* medium = Mirror(log::LogKind::kMedium);
  std::vector<uint64_t> dropped;
  for (const auto& [primary, copy] : medium->segments()) {
    if (before.count(copy.backup_segment) != 0) dropped.push_back(primary);
  }
  return medium->Trim(dropped);
}

Status SendIndexSink::FlushTail(const IndexControl& control) {
  if (control.buffer > 1) {
    return Status::InvalidArgument("FLUSH-TAIL names buffer " +
                                   std::to_string(control.buffer) +
                                   " of a log (0 or 1)");
  }
  LogMirror* mirror = Mirror(control.kind);
  // A primary segment names one live copy: the first bytes of a segment
  // make any older copy of it, in any of the region's logs, stale (the
  // primary freed and reused the segment).
  if (control.starts) {
    for (auto& each : mirrors_) {
      KVS_RETURN_IF_ERROR(each->Trim({control.primary_segment}));
    }
  } else {
    // A later flush of a segment whose copy is gone: the primary freed it
    // meanwhile (a medium segment merged away while its buffer was still
    // being filled, say). Nothing to keep.
    const auto copies = mirror->segments();
    const auto copy = copies.find(control.primary_segment);
    if (copy == copies.end() ||
        copy->second.chain_index != control.chain_index) {
      return Status::Ok();
    }
  }
  char* data = buffers_[LogBuffer(control.kind, control.buffer)]->data();
  KVS_RETURN_IF_ERROR(
      mirror->Persist(control.primary_segment, control.chain_index,
                      std::string_view(data, control.bytes), control.sealed));
  ++stats_.tails;
  stats_.tail_bytes += control.bytes;
  // The buffer's next segment lands on zeros, as on a fresh segment.
  if (control.sealed) std::memset(data, 0, kBufferBytes);
  return Status::Ok();
}

Status SendIndexSink::LoggedSince(std::vector<LoggedWrite>* writes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t after = installer_->compacted_lsn();
  writes->clear();
  io::AlignedBuffer read(kBufferBytes);
  for (const log::LogKind kind : {log::LogKind::kSmall, log::LogKind::kLarge}) {
    // Each segment of the log, by chain index: the bytes a buffer holds
    // (landed since the last FLUSH-TAIL, and everything before it in the
    // segment) supersede the persisted copy's.
    std::map<uint64_t, std::string> segments;
    for (const auto& [primary, copy] : Mirror(kind)->segments()) {
      KVS_RETURN_IF_ERROR(volume_->file()->Read(
          alloc::SegmentStart(copy.backup_segment), kBufferBytes, read.data()));
      segments[copy.chain_index].assign(read.data(), copy.bytes);
    }
    for (size_t parity = 0; parity < 2; ++parity) {
      const std::string_view landed(buffers_[LogBuffer(kind, parity)]->data(),
                                    kBufferBytes);
      log::SegmentHeader header;
      if (!log::DecodeSegmentHeader(landed, &header).ok() ||
          header.kind != kind) {
        continue;  // zeroed: sealed and persisted, or never used
      }
      segments[header.chain_index].assign(landed);
    }
    for (const auto& [chain_index, bytes] : segments) {
      log::SegmentHeader header;
      if (!log::DecodeSegmentHeader(bytes, &header).ok()) {
        return Status::Corruption(
            "the copy of chain position " + std::to_string(chain_index) +
            " of the " + log::LogKindName(kind) + " log has no valid header");
      }
      // Records up to the first that does not check out: the end of what
      // landed (a write is acknowledged only with everything before it).
      for (size_t offset = log::kSegmentHeaderBytes;;) {
        log::Record record;
        size_t size = 0;
        if (!log::DecodeRecord(std::string_view(bytes).substr(offset),
                               header.nonce, &record, &size) ||
            record.type == log::RecordType::kSegmentEnd) {
          break;
        }
        offset += size;
        if (record.lsn <= after || (record.type != log::RecordType::kPut &&
                                    record.type != log::RecordType::kDelete)) {
          continue;
        }
        writes->push_back({record.lsn, record.type == log::RecordType::kPut,
                           std::string(record.key), std::string(record.value)});
      }
    }
  }
  std::sort(
      writes->begin(), writes->end(),
      [](const LoggedWrite& a, const LoggedWrite& b) { return a.lsn < b.lsn; });
  // A record the large log's GC relocated may still be in its old segment.
  writes->erase(std::unique(writes->begin(), writes->end(),
                            [](const LoggedWrite& a, const LoggedWrite& b) {
                              return a.lsn == b.lsn;
                            }),
                writes->end());
  // A prefix, as on the primary's own recovery: what landed of each log is
  // a prefix of that log, and a write past the first LSN missing from both
  // was never acknowledged (the primary acknowledges a write only once
  // every backup holds it and everything before it).
  size_t kept = 0;
  while (kept < writes->size() && (*writes)[kept].lsn == after + kept + 1) {
    ++kept;
  }
  writes->resize(kept);
  return Status::Ok();
}

std::map<uint64_t, MirroredSegment> SendIndexSink::copies(
    log::LogKind kind) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return Mirror(kind)->segments();
}

std::map<size_t, lsm::LevelDescriptor> SendIndexSink::levels() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return installer_->levels();
}

SendIndexSinkStats SendIndexSink::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kvs::replication
