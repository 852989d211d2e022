#include "replication/send_index_sink.h"

#include <time.h>

#include <cstring>
#include <string>

namespace kvs::replication {
namespace {

constexpr log::LogKind kKinds[kSendIndexLogs] = {
    log::LogKind::kSmall, log::LogKind::kLarge, log::LogKind::kMedium};

uint64_t ThreadCpuNanos() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(now.tv_nsec);
}

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

Status SendIndexSink::Handle(const IndexControl& control) {
  std::lock_guard<std::mutex> lock(mutex_);
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
      status = installer_->Install(control.level, control.descriptor,
                                   control.emptied, nullptr);
      if (status.ok()) ++stats_.levels;
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

std::map<size_t, lsm::LevelDescriptor> SendIndexSink::levels() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return installer_->levels();
}

SendIndexSinkStats SendIndexSink::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kvs::replication
