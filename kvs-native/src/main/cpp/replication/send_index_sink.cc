#include "replication/send_index_sink.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "alloc/device_offset.h"
#include "alloc/metadata_batch.h"
#include "io/aligned_buffer.h"
#include "log/log_format.h"
#include "util/coding.h"
#include "util/limits.h"
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

Status SendIndexSink::Create(channel::Session* session, uint64_t tag,
                             alloc::Volume* volume, uint64_t region_id,
                             uint64_t incarnation,
                             std::unique_ptr<SendIndexSink>* sink,
                             ControlReply* held) {
  std::unique_ptr<SendIndexSink> created(new SendIndexSink());
  created->volume_ = volume;
  std::vector<std::shared_ptr<channel::ReplicaBuffer>> buffers;
  KVS_RETURN_IF_ERROR(
      session->ReplicaBuffers(tag, kSendIndexBuffers, kBufferBytes, &buffers));
  for (size_t i = 0; i < kSendIndexBuffers; ++i) {
    created->buffers_[i] = std::move(buffers[i]);
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
  // What it holds of the same lineage is kept (and reported); anything
  // else goes, and the primary ships its whole state.
  bool resume = HoldsReplicaOf(*volume, region_id, incarnation);
  held->copies.clear();
  held->levels.clear();
  if (resume) {
    for (size_t i = 0; i < kSendIndexLogs; ++i) {
      for (const auto& [primary, copy] : created->mirrors_[i]->segments()) {
        held->copies.push_back(
            {kKinds[i], primary, copy.chain_index, copy.bytes, copy.sealed});
      }
    }
    for (const auto& [level, hash] : created->installer_->primary_hashes()) {
      held->levels.push_back({static_cast<uint32_t>(level), hash});
    }
    resume = held->copies.size() <= kHeldCopiesMax &&
             held->levels.size() <= kHeldLevelsMax &&
             held->levels.size() == created->installer_->levels().size();
  }
  if (!resume) {
    held->copies.clear();
    held->levels.clear();
    // Marked before anything changes (levels and copies under the marker
    // are a primary's, never this region's own), as of no lineage until
    // emptied: a crash half-way never resumes from a mix.
    alloc::MetadataBatch mark;
    mark.Put(ReplicaMarkerKey(region_id), coding::Fixed64String(0));
    KVS_RETURN_IF_ERROR(volume->Commit(mark));
    KVS_RETURN_IF_ERROR(created->installer_->Clear());
    for (auto& mirror : created->mirrors_) {
      KVS_RETURN_IF_ERROR(mirror->Clear());
    }
    alloc::MetadataBatch lineage;
    lineage.Put(ReplicaMarkerKey(region_id),
                coding::Fixed64String(incarnation));
    KVS_RETURN_IF_ERROR(volume->Commit(lineage));
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
          control.level, control.primary_segment,
          std::string_view(buffers_[kIndexBuffer]->data(), control.bytes));
      // The primary writes the next segment only once this one was
      // answered; until then the buffer's pages go back.
      buffers_[kIndexBuffer]->Zero(
          0, std::min<size_t>(control.bytes, buffers_[kIndexBuffer]->size()));
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
  // Kept while any level still names them: a drain's new L2 carries the
  // medium segments of draining levels whose empty installs follow it.
  for (const auto& [level, descriptor] : installer_->levels()) {
    for (const uint64_t segment : descriptor.medium_segments) {
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
  const size_t index = LogBuffer(control.kind, control.buffer);
  if (control.starts) {
    for (auto& each : mirrors_) {
      KVS_RETURN_IF_ERROR(each->Trim({control.primary_segment}));
    }
    whole_[index] = {control.primary_segment, control.chain_index};
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
    const std::pair<uint64_t, uint64_t> segment{control.primary_segment,
                                                control.chain_index};
    if (whole_[index] != segment) {
      KVS_RETURN_IF_ERROR(FillFromCopy(copy->second, buffers_[index].get()));
      whole_[index] = segment;
    }
  }
  channel::ReplicaBuffer& buffer = *buffers_[index];
  const char* data = buffer.data();
  KVS_RETURN_IF_ERROR(
      mirror->Persist(control.primary_segment, control.chain_index,
                      std::string_view(data, control.bytes), control.sealed));
  ++stats_.tails;
  stats_.tail_bytes += control.bytes;
  // The buffer's next segment lands on zeros, as on a fresh segment.
  if (control.sealed) {
    buffer.Zero(0, kBufferBytes);
    whole_[index] = {};
  }
  return Status::Ok();
}

Status SendIndexSink::FillFromCopy(const MirroredSegment& copy,
                                   channel::ReplicaBuffer* buffer) const {
  // A catch-up resuming a copy sends only the bytes from the block the copy
  // ends in (Replicator::CatchUp): the buffer gets the copy's bytes before
  // them, so that it holds the segment whole -- a promotion reads what
  // landed in it, and a sealed copy is walked from it (LogMirror::Persist).
  // Bytes landing meanwhile land past them.
  const size_t from =
      copy.bytes / limits::io_alignment_bytes * limits::io_alignment_bytes;
  if (from == 0) return Status::Ok();
  io::AlignedBuffer held(from);
  KVS_RETURN_IF_ERROR(volume_->file()->Read(
      alloc::SegmentStart(copy.backup_segment), from, held.data()));
  std::memcpy(buffer->data(), held.data(), from);
  return Status::Ok();
}

std::vector<LandedLog> SendIndexSink::Landed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LandedLog> landed;
  for (const log::LogKind kind : {log::LogKind::kSmall, log::LogKind::kLarge}) {
    for (size_t parity = 0; parity < 2; ++parity) {
      landed.push_back(
          {kind, std::string_view(buffers_[LogBuffer(kind, parity)]->data(),
                                  kBufferBytes)});
    }
  }
  return landed;
}

void SendIndexSink::Snapshot(ReplicaSnapshot* snapshot) const {
  std::lock_guard<std::mutex> lock(mutex_);
  snapshot->levels = installer_->levels();
  snapshot->compacted_lsn = installer_->compacted_lsn();
  snapshot->small_copies = Mirror(log::LogKind::kSmall)->segments();
  snapshot->large_copies = Mirror(log::LogKind::kLarge)->segments();
  std::vector<uint64_t> segments;
  for (const auto& mirror : mirrors_) {
    for (const auto& [primary, copy] : mirror->segments()) {
      segments.push_back(copy.backup_segment);
    }
  }
  for (const auto& [level, descriptor] : snapshot->levels) {
    for (const uint64_t segment : descriptor.AllSegments()) {
      segments.push_back(segment);
    }
  }
  snapshot->Pin(volume_, std::move(segments));
  for (const log::LogKind kind : {log::LogKind::kSmall, log::LogKind::kLarge}) {
    for (size_t parity = 0; parity < 2; ++parity) {
      const channel::ReplicaBuffer& buffer = *buffers_[LogBuffer(kind, parity)];
      snapshot->AddLanded(kind, std::string_view(buffer.data(), kBufferBytes));
    }
  }
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
