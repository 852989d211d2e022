// Region: garbage collection of the large-value log.
//
// Compaction counts, per large-log segment, the bytes of records whose last
// pointer it dropped (a newer version or a delete shadowed them). A sealed
// segment whose garbage equals the bytes of all its put records is released
// in the same metadata batch, so no pointer to released space ever exists,
// across crashes too. To reclaim segments that are only partly garbage, GC
// relocates their live records -- re-appends them to the large log and
// inserts the new pointers into L0 -- most garbage first (RStore's
// free-space ordering); the old copies then become garbage as the new
// versions are compacted down, and the segment is released as above.

#include <algorithm>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "log/log_format.h"
#include "lsm/region.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::lsm {

void Region::OnLargeSegmentSealed(const log::SealedSegment& sealed,
                                  alloc::MetadataBatch* batch) {
  std::string value(16, '\0');
  coding::EncodeFixed64(value.data(), sealed.put_bytes);
  coding::EncodeFixed64(value.data() + 8, sealed.max_lsn);
  batch->Put(CatalogPrefix(id_) + "sealed/" + coding::Hex16(sealed.segment),
             value);
}

void Region::OnLargeSegmentSealedDurably(const log::SealedSegment& sealed) {
  std::lock_guard<std::mutex> lock(gc_mutex_);
  large_sealed_[sealed.segment] = {sealed.put_bytes, sealed.max_lsn};
}

std::vector<uint64_t> Region::DeadSegmentsLocked() const {
  std::vector<uint64_t> dead;
  for (const auto& [segment, sealed] : large_sealed_) {
    const auto garbage = large_garbage_.find(segment);
    const uint64_t bytes =
        garbage == large_garbage_.end() ? 0 : garbage->second;
    KVS_CHECK_MSG(bytes <= sealed.put_bytes,
                  "more garbage counted than a segment holds");
    if (bytes == sealed.put_bytes) {
      dead.push_back(segment);
    }
  }
  return dead;
}

std::vector<log::ReleasedSegment> Region::ReleaseSegments(
    const std::vector<uint64_t>& segments, alloc::MetadataBatch* batch) {
  std::vector<log::ReleasedSegment> released;
  for (uint64_t segment : segments) {
    released.push_back(large_log_->ReleaseSegment(segment, batch));
    batch->Delete(CatalogPrefix(id_) + "gc/" + coding::Hex16(segment));
    batch->Delete(CatalogPrefix(id_) + "sealed/" + coding::Hex16(segment));
  }
  return released;
}

void Region::ReportReleased(
    log::LogKind kind,
    const std::vector<log::ReleasedSegment>& released) const {
  if (context_.on_log_released && !released.empty()) {
    context_.on_log_released(id_, kind, released);
  }
}

void Region::ForgetSegmentsLocked(const std::vector<uint64_t>& segments) {
  for (uint64_t segment : segments) {
    large_garbage_.erase(segment);
    large_sealed_.erase(segment);
    relocated_.erase(segment);
    context_.records->Forget(segment);
    gc_freed_segments_.fetch_add(1, std::memory_order_relaxed);
  }
}

Status Region::CollectGarbage() {
  std::vector<uint64_t> dead;
  // A drain's install releases dead segments too: one at a time.
  std::unique_lock<std::mutex> install_lock(install_mutex_);
  {
    std::lock_guard<std::mutex> lock(gc_mutex_);
    dead = DeadSegmentsLocked();
  }
  if (!dead.empty()) {
    alloc::MetadataBatch batch;
    const std::vector<log::ReleasedSegment> released =
        ReleaseSegments(dead, &batch);
    KVS_RETURN_IF_ERROR(context_.volume->Commit(batch));
    large_log_->Forget(released);
    ReportReleased(log::LogKind::kLarge, released);
    std::lock_guard<std::mutex> lock(gc_mutex_);
    ForgetSegmentsLocked(dead);
  }
  install_lock.unlock();
  std::vector<uint64_t> victims;
  {
    std::lock_guard<std::mutex> lock(gc_mutex_);
    std::vector<std::pair<uint64_t, uint64_t>> candidates;  // garbage, seg
    for (const auto& [segment, sealed] : large_sealed_) {
      const auto garbage = large_garbage_.find(segment);
      if (garbage == large_garbage_.end() || relocated_.count(segment) ||
          sealed.put_bytes == 0) {
        continue;
      }
      if (static_cast<double>(garbage->second) >=
          options_.gc_garbage_ratio * static_cast<double>(sealed.put_bytes)) {
        candidates.emplace_back(garbage->second, segment);
      }
    }
    std::sort(candidates.rbegin(), candidates.rend());
    for (size_t i = 0;
         i < candidates.size() && i < options_.gc_segments_per_pass; ++i) {
      victims.push_back(candidates[i].second);
    }
  }
  for (uint64_t segment : victims) {
    KVS_RETURN_IF_ERROR(RelocateLiveRecords(segment));
    std::lock_guard<std::mutex> lock(gc_mutex_);
    relocated_.insert(segment);
  }
  return Status::Ok();
}

Status Region::RelocateLiveRecords(uint64_t segment) {
  io::AlignedBuffer buffer(limits::segment_size_bytes);
  gc_read_bytes_.fetch_add(buffer.size(), std::memory_order_relaxed);
  KVS_RETURN_IF_ERROR(context_.volume->file()->Read(
      alloc::SegmentStart(segment), buffer.size(), buffer.data()));
  log::SegmentHeader header;
  KVS_RETURN_IF_ERROR(log::DecodeSegmentHeader(buffer.view(), &header));
  struct Candidate {
    std::string key;
    std::string value;
    uint64_t device_offset;
    log::WriteId write_id;  // kept: a retry of the write must still find it
  };
  std::vector<Candidate> candidates;
  for (size_t offset = log::kSegmentHeaderBytes;;) {
    log::Record record;
    size_t size = 0;
    if (!log::DecodeRecord(buffer.view().substr(offset), header.nonce, &record,
                           &size) ||
        record.type == log::RecordType::kSegmentEnd) {
      break;
    }
    // A split region's parent's segment holds its sibling's keys too: never
    // live here.
    if (record.type == log::RecordType::kPut &&
        origin_.bounds.Contains(record.key)) {
      candidates.push_back({std::string(record.key), std::string(record.value),
                            alloc::DeviceOffset(segment, offset),
                            record.write_id});
    }
    offset += size;
  }
  // Which records are the newest version of their key. The levels' lookups
  // read the device, so they run without the exclusive lock (a shard's
  // reads and writes waited up to 190 ms for it: docs/BENCHMARKS.md, the
  // tail profile), on the tables and levels as they are now; only this
  // thread merges L0s, and a drain running meanwhile only merges levels,
  // which keeps each key's newest version where reads find it, so what is
  // live in these levels is live in the ones that replace them. Under the
  // exclusive lock the L0s, where any write since lands, are looked at again
  // below.
  const auto [active, immutables, levels] = TablesNow();
  // The L0's verdict on a candidate: kNotThere, or whether it is live.
  enum class InL0 { kNotThere, kLive, kStale };
  const auto in_l0 = [](const L0Table* table, const Candidate& candidate) {
    L0Table::Entry entry;
    if (table == nullptr || !table->Get(candidate.key, &entry)) {
      return InL0::kNotThere;
    }
    LogPointer pointer;
    return entry.kind == kL0LargePointer &&
                   DecodeLogPointer(entry.payload, &pointer) &&
                   pointer.device_offset == candidate.device_offset
               ? InL0::kLive
               : InL0::kStale;
  };
  std::vector<const Candidate*> live_in_levels;
  std::string leaf_buffer;
  for (const Candidate& candidate : candidates) {
    InL0 verdict = in_l0(active.get(), candidate);
    for (size_t i = 0; verdict == InL0::kNotThere && i < immutables.size();
         ++i) {
      verdict = in_l0(immutables[i].get(), candidate);  // newest first
    }
    if (verdict == InL0::kLive) {
      live_in_levels.push_back(&candidate);  // checked again below
      continue;
    }
    if (verdict == InL0::kStale) continue;
    for (const auto& level : levels) {
      if (level == nullptr || !level->MayContain(candidate.key)) continue;
      btree::LeafValue leaf;
      bool found = false;
      KVS_RETURN_IF_ERROR(
          level->tree().Get(candidate.key, &leaf_buffer, &leaf, &found));
      if (found) {
        if (leaf.kind == btree::EntryKind::kPutInLog &&
            leaf.log_offset == candidate.device_offset) {
          live_in_levels.push_back(&candidate);
        }
        break;
      }
    }
  }
  // Under the exclusive lock no write can slip in between checking that a
  // record is still the newest version of its key and re-inserting it. A
  // write since the check above is in an L0 now (the tables may have been
  // switched meanwhile, never compacted: that is this thread's work).
  std::unique_lock<std::shared_mutex> lock(l0_mutex_);
  KVS_RETURN_IF_ERROR(WritesStoppedLocked());
  for (const Candidate* live : live_in_levels) {
    const Candidate& candidate = *live;
    InL0 verdict = in_l0(active_.get(), candidate);
    for (auto it = immutables_.rbegin();
         verdict == InL0::kNotThere && it != immutables_.rend(); ++it) {
      verdict = in_l0(it->table.get(), candidate);  // newest first
    }
    if (verdict == InL0::kStale) {
      continue;
    }
    log::AppendResult appended;
    KVS_RETURN_IF_ERROR(large_log_->Append(log::RecordType::kPut, candidate.key,
                                           candidate.value, &lsn_, 0, &appended,
                                           candidate.write_id));
    active_->Insert(candidate.key, appended.lsn, kL0LargePointer,
                    EncodeLogPointer({appended.device_offset, appended.size}));
    active_kv_bytes_.fetch_add(candidate.key.size() + candidate.value.size(),
                               std::memory_order_relaxed);
    gc_relocated_bytes_.fetch_add(appended.size, std::memory_order_relaxed);
  }
  return Status::Ok();
}

}  // namespace kvs::lsm
