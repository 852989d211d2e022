#include "lsm/region.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "alloc/device_offset.h"
#include "log/log_reader.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

// The segments of a log, from the catalog.
Status LoadLogSegments(const alloc::Volume& volume, const std::string& prefix,
                       std::map<uint64_t, uint64_t>* segments) {
  for (const auto& [key, value] : volume.CatalogScan(prefix)) {
    const std::string digits = key.substr(prefix.size());
    if (digits.size() != 16 || value.size() != 8 ||
        digits.find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Status::Corruption("malformed catalog entry " + key);
    }
    (*segments)[std::stoull(digits, nullptr, 16)] =
        coding::DecodeFixed64(value.data());
  }
  return Status::Ok();
}

}  // namespace

std::string Region::LogCatalogPrefix(uint64_t id, log::LogKind kind) {
  return CatalogPrefix(id) + "log/" + log::LogKindName(kind) + "/";
}

std::string Region::CatalogPrefix(uint64_t id) {
  char digits[17];
  std::snprintf(digits, sizeof(digits), "%016llx",
                static_cast<unsigned long long>(id));
  return std::string("r/") + digits + "/";
}

Region::Region(const RegionContext& context, std::string name, uint64_t id,
               const RegionOptions& options)
    : context_(context),
      name_(std::move(name)),
      id_(id),
      options_(options),
      active_(NewL0()) {}

bool Region::ActiveFullLocked() const {
  return active_->MemoryBytes() >= options_.l0_size_bytes ||
         active_kv_bytes_.load(std::memory_order_relaxed) >=
             options_.l0_size_bytes;
}

std::shared_ptr<L0Table> Region::NewL0() const {
  // Arena blocks of a sixteenth of the L0 size keep the L0's memory, which
  // decides when it is full, within 1/16 of what it holds.
  const size_t block =
      std::clamp<size_t>(options_.l0_size_bytes / 16, Arena::kBlockBytesMin,
                         L0Table::kArenaBlockBytesDefault);
  return std::make_shared<L0Table>(block);
}

Region::~Region() {
  WaitForCompactions();
  // A clean close makes every acknowledged write durable; an error here was
  // already reported to the writers it concerns (it is sticky). A region
  // whose opening failed may have no logs.
  if (small_log_ != nullptr && large_log_ != nullptr) {
    (void)Sync();
  }
  if (context_.l0_budget != nullptr) {
    context_.l0_budget->Release(active_accounted_.exchange(0));
  }
  {
    std::lock_guard<std::mutex> lock(retired_mutex_);
    for (Retired& retired : retired_) {
      retired.levels.clear();
    }
  }
  ReclaimRetired();
}

Status Region::Create(const RegionContext& context, std::string name,
                      uint64_t id, const RegionOptions& options,
                      std::unique_ptr<Region>* region) {
  std::unique_ptr<Region> created(
      new Region(context, std::move(name), id, options));
  KVS_RETURN_IF_ERROR(created->OpenLogs(/*recover=*/false));
  created->DrawIncarnation();
  *region = std::move(created);
  return Status::Ok();
}

Status Region::Open(const RegionContext& context, std::string name, uint64_t id,
                    const RegionOptions& options,
                    std::unique_ptr<Region>* region) {
  std::unique_ptr<Region> opened(
      new Region(context, std::move(name), id, options));
  KVS_RETURN_IF_ERROR(opened->LoadLevels());
  KVS_RETURN_IF_ERROR(opened->OpenLogs(/*recover=*/true));
  opened->DrawIncarnation();
  {
    // A drain a crash interrupted goes on (an L0 job with no L0 starts it).
    std::lock_guard<std::mutex> stall_lock(opened->stall_mutex_);
    if (!opened->draining_.empty() && !opened->compacting_) {
      opened->StartCompactionLocked();
    }
  }
  *region = std::move(opened);
  return Status::Ok();
}

void Region::DrawIncarnation() {
  std::random_device random;
  do {
    incarnation_ =
        (uint64_t{random()} << 32) ^ random() ^
        static_cast<uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count());
  } while (incarnation_ == 0);
}

uint64_t Region::DaughterIncarnation(uint64_t parent, bool upper) {
  if (parent == 0) return 0;
  // splitmix64 of the parent's, one stream per side.
  uint64_t mixed =
      parent + (upper ? 0x9e3779b97f4a7c15ull : 0x7f4a7c159e3779b9ull);
  mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ull;
  mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebull;
  mixed ^= mixed >> 31;
  return mixed == 0 ? 1 : mixed;
}

Status Region::OpenLogs(bool recover, const SplitHandoff* handoff) {
  auto appended = [this](log::LogKind kind) {
    std::function<void(const log::AppendedBytes&)> hook;
    if (context_.on_log_append) {
      hook = [this, kind](const log::AppendedBytes& bytes) {
        context_.on_log_append(id_, kind, bytes);
      };
    }
    return hook;
  };
  const log::LogIdentity small{id_,
                               log::LogKind::kSmall,
                               LogCatalogPrefix(id_, log::LogKind::kSmall),
                               {},
                               appended(log::LogKind::kSmall),
                               {},
                               origin_.ancestors};
  const log::LogIdentity large{
      id_,
      log::LogKind::kLarge,
      LogCatalogPrefix(id_, log::LogKind::kLarge),
      [this](const log::SealedSegment& sealed, alloc::MetadataBatch* batch) {
        OnLargeSegmentSealed(sealed, batch);
      },
      appended(log::LogKind::kLarge),
      [this](const log::SealedSegment& sealed) {
        OnLargeSegmentSealedDurably(sealed);
      },
      origin_.ancestors};
  if (!recover) {
    KVS_RETURN_IF_ERROR(
        log::LogWriter::Open(context_.volume, context_.sync_group, small,
                             context_.log_options, nullptr, &small_log_));
    return log::LogWriter::Open(context_.volume, context_.sync_group, large,
                                context_.log_options, nullptr, &large_log_);
  }
  if (handoff != nullptr) {
    // A daughter at its split: the parent's L0s hold what replaying its
    // logs would give.
    KVS_RETURN_IF_ERROR(log::LogWriter::Open(
        context_.volume, context_.sync_group, small, context_.log_options,
        &handoff->small_tail, &small_log_));
    KVS_RETURN_IF_ERROR(log::LogWriter::Open(
        context_.volume, context_.sync_group, large, context_.log_options,
        &handoff->large_tail, &large_log_));
    lsn_.store(std::max(handoff->last_lsn, compacted_lsn_));
    // The parent's write ids stay with it: a retry of its writes here
    // learns that its outcome is unknown (WriteIds).
    write_ids_.Reset(lsn_.load());
    return Status::Ok();
  }
  const auto started = std::chrono::steady_clock::now();
  const uint64_t compacted_lsn = compacted_lsn_;
  // The ids of writes compacted into the levels are not replayed.
  write_ids_.Reset(compacted_lsn);
  std::vector<ReplayedWrite> writes;
  std::map<uint64_t, uint64_t> small_segments, large_segments;
  KVS_RETURN_IF_ERROR(
      LoadLogSegments(*context_.volume, small.catalog_prefix, &small_segments));
  KVS_RETURN_IF_ERROR(
      LoadLogSegments(*context_.volume, large.catalog_prefix, &large_segments));
  // Where each write lies, so that the logs can be cut there.
  auto chain_indexes = [](const std::map<uint64_t, uint64_t>& segments) {
    std::map<uint64_t, uint64_t> by_segment;
    for (const auto& [chain_index, segment] : segments) {
      by_segment[segment] = chain_index;
    }
    return by_segment;
  };
  const std::map<uint64_t, uint64_t> small_chain =
      chain_indexes(small_segments);
  const std::map<uint64_t, uint64_t> large_chain =
      chain_indexes(large_segments);
  log::LogTail small_tail, large_tail;
  KVS_RETURN_IF_ERROR(log::ReplayLog(
      context_.volume->file(), small, small_segments,
      [&](const log::Record& record, uint64_t offset, uint32_t) {
        if (record.lsn > compacted_lsn) {
          const bool put = record.type == log::RecordType::kPut;
          writes.push_back(
              {record.lsn, put ? uint8_t{kL0InPlace} : uint8_t{kL0Tombstone},
               std::string(record.key),
               put ? std::string(record.value) : std::string(),
               log::LogKind::kSmall, small_chain.at(alloc::SegmentOf(offset)),
               alloc::OffsetInSegment(offset), record.write_id,
               record.continues_batch});
        }
        return Status::Ok();
      },
      &small_tail));
  // Sealed large segments whose records are all compacted hold nothing to
  // replay: skip them (the large log is the bulk of the data).
  std::map<uint64_t, uint64_t> to_replay;
  {
    std::lock_guard<std::mutex> lock(gc_mutex_);
    for (const auto& [chain_index, segment] : large_segments) {
      const auto sealed = large_sealed_.find(segment);
      if (sealed == large_sealed_.end() ||
          sealed->second.max_lsn > compacted_lsn ||
          chain_index == large_segments.rbegin()->first) {
        to_replay.emplace(chain_index, segment);
      }
    }
  }
  KVS_RETURN_IF_ERROR(log::ReplayLog(
      context_.volume->file(), large, to_replay,
      [&](const log::Record& record, uint64_t offset, uint32_t size) {
        if (record.lsn > compacted_lsn) {
          writes.push_back(
              {record.lsn, kL0LargePointer, std::string(record.key),
               EncodeLogPointer({offset, size}), log::LogKind::kLarge,
               large_chain.at(alloc::SegmentOf(offset)),
               alloc::OffsetInSegment(offset), record.write_id,
               record.continues_batch});
        }
        return Status::Ok();
      },
      &large_tail));
  large_tail.segments = large_segments;
  std::sort(writes.begin(), writes.end(),
            [](const ReplayedWrite& a, const ReplayedWrite& b) {
              return a.lsn < b.lsn;
            });
  for (size_t i = 1; i < writes.size(); ++i) {
    if (writes[i].lsn == writes[i - 1].lsn) {
      return Status::Corruption("region " + name_ + ": LSN " +
                                std::to_string(writes[i].lsn) +
                                " appears twice in its logs");
    }
  }
  // Point in time: every LSN was appended to one of the two logs, and each
  // log recovers to a prefix of its own, so the region recovers to the
  // first LSN missing from both: what lies past it was acknowledged later
  // than a write that is lost, and must not survive it.
  size_t kept = 0;
  while (kept < writes.size() && writes[kept].lsn == compacted_lsn + kept + 1) {
    ++kept;
  }
  // An atomic batch is kept whole or not at all: its LSNs are consecutive
  // and every record but its last says that more follow, so a prefix that
  // ends in such a record ends inside a batch whose last record is lost.
  // It goes back to where that batch began (the record after the last one
  // that said nothing follows).
  while (kept > 0 && writes[kept - 1].continues_batch) {
    --kept;
  }
  bool small_cut = false, large_cut = false;
  if (kept < writes.size()) {
    KVS_RETURN_IF_ERROR(
        CutLog(small, small_segments, writes, kept, &small_tail, &small_cut));
    KVS_RETURN_IF_ERROR(
        CutLog(large, large_segments, writes, kept, &large_tail, &large_cut));
  }
  for (size_t i = 0; i < kept; ++i) {
    const ReplayedWrite& write = writes[i];
    // The logs of a region split from another may hold its sibling's
    // writes (a promoted replica's copies of the parent's logs): they count
    // for the LSNs, not for what the region holds.
    if (!origin_.bounds.Contains(write.key)) continue;
    active_->Insert(write.key, write.lsn, write.kind, write.payload);
    write_ids_.Record(write.write_id, write.lsn, write.kind == kL0Tombstone,
                      write.kind == kL0InPlace ? std::string_view(write.payload)
                                               : std::string_view());
    LogPointer pointer;
    active_kv_bytes_.fetch_add(
        write.kind == kL0LargePointer &&
                DecodeLogPointer(write.payload, &pointer)
            ? pointer.record_size - log::kRecordHeaderBytes
            : write.key.size() + write.payload.size(),
        std::memory_order_relaxed);
  }
  lsn_.store(compacted_lsn + kept);
  recovery_.replayed_writes = kept;
  recovery_.dropped_writes = writes.size() - kept;
  recovery_.cut_lsn = kept < writes.size() ? compacted_lsn + kept + 1 : 0;
  KVS_RETURN_IF_ERROR(log::LogWriter::Open(context_.volume, context_.sync_group,
                                           small, context_.log_options,
                                           &small_tail, &small_log_));
  KVS_RETURN_IF_ERROR(log::LogWriter::Open(context_.volume, context_.sync_group,
                                           large, context_.log_options,
                                           &large_tail, &large_log_));
  // New writes reuse the dropped LSNs, in either log: both logs must have
  // lost the dropped records for good before the first of them.
  if (small_cut) KVS_RETURN_IF_ERROR(small_log_->EndTail());
  if (large_cut) KVS_RETURN_IF_ERROR(large_log_->EndTail());
  recovery_.micros = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - started)
          .count());
  return Status::Ok();
}

Status Region::CutLog(const log::LogIdentity& identity,
                      const std::map<uint64_t, uint64_t>& segments,
                      const std::vector<ReplayedWrite>& writes, size_t kept,
                      log::LogTail* tail, bool* cut_here) {
  // The log's first dropped write: LSNs grow along a log, so it is also the
  // first in log order, and every later record of the log goes with it.
  const ReplayedWrite* first = nullptr;
  for (size_t i = kept; i < writes.size() && first == nullptr; ++i) {
    if (writes[i].log == identity.kind) first = &writes[i];
  }
  *cut_here = first != nullptr;
  if (first == nullptr) {
    return Status::Ok();  // this log ends before the cut
  }
  log::LogTail cut;
  KVS_RETURN_IF_ERROR(log::ReplayLog(
      context_.volume->file(), identity,
      {{first->chain_index, segments.at(first->chain_index)}},
      [](const log::Record&, uint64_t, uint32_t) { return Status::Ok(); }, &cut,
      first->offset_in_segment));
  // The segment cut stays allocated and new records will be appended where
  // the dropped ones were: nothing cached of the dropped ones may answer a
  // pointer to a new one (same offset, size and key, another value).
  if (context_.records != nullptr) {
    context_.records->Forget(segments.at(first->chain_index));
  }
  cut.segments.clear();
  for (const auto& [chain_index, segment] : segments) {
    if (chain_index <= first->chain_index) {
      cut.segments.emplace(chain_index, segment);
    } else {
      cut.dropped.emplace(chain_index, segment);
    }
  }
  if (identity.kind == log::LogKind::kLarge) {
    // The cut segment is no longer sealed (it is sealed again, with what it
    // keeps, when the log moves on); dropped ones lose their GC state.
    std::lock_guard<std::mutex> lock(gc_mutex_);
    large_sealed_.erase(segments.at(first->chain_index));
    for (const auto& [chain_index, segment] : cut.dropped) {
      large_sealed_.erase(segment);
      large_garbage_.erase(segment);
      cut.dropped_catalog_keys.push_back(CatalogPrefix(id_) + "sealed/" +
                                         coding::Hex16(segment));
      cut.dropped_catalog_keys.push_back(CatalogPrefix(id_) + "gc/" +
                                         coding::Hex16(segment));
    }
  }
  *tail = std::move(cut);
  return Status::Ok();
}

Status Region::ValidateKeyValue(std::string_view key,
                                std::string_view value) const {
  if (key.empty()) {
    return Status::InvalidArgument("empty key");
  }
  if (!origin_.bounds.Contains(key)) {
    return Status::InvalidArgument("key outside the bounds of region " + name_);
  }
  if (key.size() > limits::key_size_bytes_max) {
    return Status::TooLarge("key of " + std::to_string(key.size()) +
                            " bytes exceeds the limit of " +
                            std::to_string(limits::key_size_bytes_max));
  }
  if (value.size() > limits::value_size_bytes_max) {
    return Status::TooLarge("value of " + std::to_string(value.size()) +
                            " bytes exceeds the limit of " +
                            std::to_string(limits::value_size_bytes_max));
  }
  return Status::Ok();
}

Status Region::Put(std::string_view key, std::string_view value,
                   log::WriteId write_id) {
  KVS_RETURN_IF_ERROR(ValidateKeyValue(key, value));
  load_sample_.Note(puts_.fetch_add(1, std::memory_order_relaxed), key);
  return Write(log::RecordType::kPut, key, value, write_id);
}

Status Region::Delete(std::string_view key, log::WriteId write_id) {
  KVS_RETURN_IF_ERROR(ValidateKeyValue(key, {}));
  load_sample_.Note(deletes_.fetch_add(1, std::memory_order_relaxed), key);
  return Write(log::RecordType::kDelete, key, {}, write_id);
}

Status Region::WritesStoppedLocked() const {
  return writes_stopped_.load(std::memory_order_acquire) ? stop_reason_
                                                         : Status::Ok();
}

Status Region::WriteBatch(const std::vector<BatchWrite>& writes) {
  if (writes.empty()) {
    return Status::InvalidArgument("an empty batch");
  }
  if (writes.size() > limits::batch_writes_max) {
    return Status::TooLarge("a batch of " + std::to_string(writes.size()) +
                            " writes exceeds the limit of " +
                            std::to_string(limits::batch_writes_max));
  }
  // Validated whole before anything is written; each log's share sized
  // with a sync mark's room before every record (the worst case).
  size_t kv_bytes = 0, small_bytes = 0, large_bytes = 0;
  for (const BatchWrite& write : writes) {
    const std::string_view value = write.put ? write.value : std::string_view();
    KVS_RETURN_IF_ERROR(ValidateKeyValue(write.key, value));
    kv_bytes += write.key.size() + value.size();
    const size_t record =
        2 * log::kRecordHeaderBytes + 8 + write.key.size() + value.size();
    (GoesToLargeLog(write.put, write.key, value) ? large_bytes : small_bytes) +=
        record;
  }
  if (kv_bytes > limits::batch_bytes_max) {
    return Status::TooLarge("a batch of " + std::to_string(kv_bytes) +
                            " key and value bytes exceeds the limit of " +
                            std::to_string(limits::batch_bytes_max));
  }
  KVS_RETURN_IF_ERROR(MakeRoomForWrite());
  std::vector<log::AppendResult> appended(writes.size());
  {
    // Exclusively: no other write takes an LSN (each takes one under this
    // lock held shared; GC's relocation holds it exclusively), so the
    // batch's LSNs are consecutive, and no reader's snapshot or L0 switch
    // comes between its inserts.
    std::unique_lock<std::shared_mutex> lock(l0_mutex_);
    KVS_RETURN_IF_ERROR(WritesStoppedLocked());
    // A new segment, if one is needed, now: a full device refuses the batch
    // before any of it is appended.
    if (small_bytes > 0) {
      KVS_RETURN_IF_ERROR(small_log_->ReserveRoom(small_bytes));
    }
    if (large_bytes > 0) {
      KVS_RETURN_IF_ERROR(large_log_->ReserveRoom(large_bytes));
    }
    for (size_t i = 0; i < writes.size(); ++i) {
      const BatchWrite& write = writes[i];
      const bool large = GoesToLargeLog(write.put, write.key, write.value);
      log::LogWriter* target = large ? large_log_.get() : small_log_.get();
      const Status status = target->Append(
          write.put ? log::RecordType::kPut : log::RecordType::kDelete,
          write.key, write.put ? write.value : std::string_view(), &lsn_, 0,
          &appended[i], {}, /*continues_batch=*/i + 1 < writes.size());
      if (!status.ok()) {
        if (i > 0) {
          // Records of the batch were appended: a later LSN taken would
          // make recovery read them as a whole batch. The log failed (room
          // was reserved), so stop every write until the region reopens.
          stop_reason_ = Status::IoError(
              "region " + name_ +
              " takes no writes: an atomic batch failed part-way (" +
              std::string(status.message()) + "); reopen it to recover");
          writes_stopped_.store(true, std::memory_order_release);
        }
        return status;
      }
    }
    for (size_t i = 0; i < writes.size(); ++i) {
      const BatchWrite& write = writes[i];
      if (!write.put) {
        active_->Insert(write.key, appended[i].lsn, kL0Tombstone, {});
      } else if (GoesToLargeLog(true, write.key, write.value)) {
        active_->Insert(
            write.key, appended[i].lsn, kL0LargePointer,
            EncodeLogPointer({appended[i].device_offset, appended[i].size}));
      } else {
        active_->Insert(write.key, appended[i].lsn, kL0InPlace, write.value);
      }
    }
    active_kv_bytes_.fetch_add(kv_bytes, std::memory_order_relaxed);
    AccountActiveMemory();
  }
  for (size_t i = 0; i < writes.size(); ++i) {
    const BatchWrite& write = writes[i];
    load_sample_.Note(
        (write.put ? puts_ : deletes_).fetch_add(1, std::memory_order_relaxed),
        write.key);
    if (write.put && context_.records != nullptr &&
        GoesToLargeLog(true, write.key, write.value)) {
      context_.records->Remember(appended[i].device_offset, appended[i].size,
                                 write.key, write.value);
    }
  }
  if (context_.sync) {
    // Durable through the batch's last LSN: both logs, everything appended.
    KVS_RETURN_IF_ERROR(small_log_->SyncTo(small_log_->appended_position()));
    return large_log_->SyncTo(large_log_->appended_position());
  }
  return Status::Ok();
}

Status Region::Write(log::RecordType type, std::string_view key,
                     std::string_view value, log::WriteId write_id) {
  KVS_RETURN_IF_ERROR(MakeRoomForWrite());
  const bool large = GoesToLargeLog(type == log::RecordType::kPut, key, value);
  log::LogWriter* target = large ? large_log_.get() : small_log_.get();
  log::AppendResult appended;
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    KVS_RETURN_IF_ERROR(WritesStoppedLocked());
    KVS_RETURN_IF_ERROR(
        target->Append(type, key, value, &lsn_, 0, &appended, write_id));
    if (type == log::RecordType::kDelete) {
      active_->Insert(key, appended.lsn, kL0Tombstone, {});
    } else if (large) {
      active_->Insert(
          key, appended.lsn, kL0LargePointer,
          EncodeLogPointer({appended.device_offset, appended.size}));
    } else {
      active_->Insert(key, appended.lsn, kL0InPlace, value);
    }
    active_kv_bytes_.fetch_add(key.size() + value.size(),
                               std::memory_order_relaxed);
    AccountActiveMemory();
  }
  write_ids_.Record(write_id, appended.lsn, type == log::RecordType::kDelete,
                    value);
  if (large && context_.records != nullptr) {
    // Kept as it is written: a hot key's next read (its new version has a
    // new offset) finds it without a device read.
    context_.records->Remember(appended.device_offset, appended.size, key,
                               value);
  }
  if (context_.sync) {
    KVS_RETURN_IF_ERROR(target->SyncTo(appended.end_position));
    // Recovery keeps a prefix of the LSNs, so every earlier one must be
    // durable too, and some may be in the other log: a concurrent writer's,
    // or a GC relocation's (which syncs nothing itself). Each LSN below
    // this write's is in its log's buffer by now (taken and appended under
    // that log's lock), and a log with nothing unsynced returns at once.
    log::LogWriter* other = large ? small_log_.get() : large_log_.get();
    return other->SyncTo(other->appended_position());
  }
  return Status::Ok();
}

bool Region::GoesToLargeLog(bool put, std::string_view key,
                            std::string_view value) const {
  return put && Categorize(options_.placement, key.size(), value.size()) ==
                    KvCategory::kLarge;
}

bool Region::WriteMayWait(bool put, std::string_view key,
                          std::string_view value) const {
  const L0Budget* budget = context_.l0_budget;
  if (budget != nullptr && budget->Exceeded()) return true;
  std::shared_lock<std::shared_mutex> lock(l0_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return true;
  const log::LogWriter* target =
      GoesToLargeLog(put, key, value) ? large_log_.get() : small_log_.get();
  if (target->AppendMayWrite(key.size(), put ? value.size() : 0)) {
    return true;
  }
  if (!ActiveFullLocked()) return false;
  // Full: the writer switches at once unless as many L0s as may wait for
  // their merge into L1 do (or a compaction failed and left one).
  std::unique_lock<std::mutex> stall_lock(stall_mutex_, std::try_to_lock);
  return !stall_lock.owns_lock() || (!compacting_ && !immutables_.empty()) ||
         immutables_.size() >= options_.immutable_l0_max;
}

Region::Tables Region::TablesNow() const {
  std::shared_lock<std::shared_mutex> lock(l0_mutex_);
  Tables tables{active_, {}, ReadOrderLevelsLocked()};
  for (auto it = immutables_.rbegin(); it != immutables_.rend(); ++it) {
    tables.immutables.push_back(it->table);
  }
  return tables;
}

Status Region::MakeRoomForWrite() {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(options_.stall_timeout_ms);
  bool stalled = false;
  bool retried = false;  // a compaction that found no space
  const auto stall_start = std::chrono::steady_clock::now();
  while (true) {
    L0Budget* budget = context_.l0_budget;
    const bool over_budget = budget != nullptr && budget->Exceeded();
    {
      std::shared_lock<std::shared_mutex> lock(l0_mutex_);
      if (!ActiveFullLocked() && !over_budget) {
        break;
      }
    }
    {
      std::unique_lock<std::mutex> stall_lock(stall_mutex_);
      if (!background_error_.ok()) {
        return background_error_;
      }
      if (!compacting_) {
        std::unique_lock<std::shared_mutex> lock(l0_mutex_);
        if (!ActiveFullLocked() && !over_budget) {
          break;  // another writer switched already
        }
        if (!immutables_.empty() && immutable_queued_) {
          // Queued while a job ran, which ended for a catch-up: that starts
          // one once done (unless the catch-up went already).
          if (quiesce_waiters_ == 0) StartCompactionLocked();
        } else if (!immutables_.empty()) {
          // Its compaction found the volume full: try once more, and give
          // up with that error if it fails again.
          if (retried) {
            return compaction_no_space_;
          }
          retried = true;
          StartCompactionLocked();
        } else if (active_->EntryCount() > 0) {
          SwitchL0Locked();
          break;
        }
      } else {
        std::unique_lock<std::shared_mutex> lock(l0_mutex_);
        if (!ActiveFullLocked() && !over_budget) {
          // Another writer switched it meanwhile. (Falling through, as
          // before 2026-11-30, waited for the whole running job: 88 stalls
          // of up to 0.6 s in a 4 GiB load, none of them needed.)
          break;
        }
        if (immutables_.size() < options_.immutable_l0_max &&
            ActiveFullLocked()) {
          // This L0 waits in line for the running job, writers go on.
          QueueSwitchL0Locked();
          continue;
        }
      }
      if (over_budget && !ActiveFullLocked()) {
        // Memory is held by other regions' L0s (or this region's compaction
        // is running): wait for a compaction anywhere to release some.
        stall_lock.unlock();
        if (!stalled) {
          stalled = true;
          stalls_.fetch_add(1, std::memory_order_relaxed);
          budget_stalls_.fetch_add(1, std::memory_order_relaxed);
        }
        if (!budget->WaitUntilWithin(deadline)) {
          return Status::Busy(
              "engine memory budget for L0s exhausted and no "
              "compaction released memory for " +
              std::to_string(options_.stall_timeout_ms) + " ms");
        }
        continue;
      }
      if (!stalled) {
        stalled = true;
        stalls_.fetch_add(1, std::memory_order_relaxed);
      }
      if (l0_drained_.wait_until(stall_lock, deadline) ==
              std::cv_status::timeout &&
          compacting_) {
        return Status::Busy("region " + name_ +
                            ": in-memory level full and compaction behind "
                            "for " +
                            std::to_string(options_.stall_timeout_ms) + " ms");
      }
    }
  }
  if (stalled) {
    stall_micros_.fetch_add(
        static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - stall_start)
                .count()),
        std::memory_order_relaxed);
  }
  return Status::Ok();
}

void Region::AccountActiveMemory() {
  if (context_.l0_budget == nullptr) {
    return;
  }
  // Arena memory grows a block at a time, so this rarely changes.
  const uint64_t now = active_->MemoryBytes();
  uint64_t accounted = active_accounted_.load(std::memory_order_relaxed);
  while (now > accounted) {
    if (active_accounted_.compare_exchange_weak(accounted, now)) {
      context_.l0_budget->Add(now - accounted);
      return;
    }
  }
}

void Region::MakeActiveImmutableLocked() {
  Immutable immutable;
  immutable.accounted = active_accounted_.exchange(0);
  // No write is half done: they hold l0_mutex_ shared.
  immutable.table = std::move(active_);
  immutable.small_position = small_log_->appended_position();
  immutable.large_position = large_log_->appended_position();
  immutable.max_lsn = lsn_.load();
  immutable.kv_bytes = active_kv_bytes_.load(std::memory_order_relaxed);
  immutables_.push_back(std::move(immutable));
  active_ = NewL0();
  active_kv_bytes_.store(0, std::memory_order_relaxed);
}

void Region::SwitchL0Locked() {
  KVS_CHECK(!compacting_);
  MakeActiveImmutableLocked();
  StartCompactionLocked();
}

void Region::QueueSwitchL0Locked() {
  KVS_CHECK(compacting_ && immutables_.size() < options_.immutable_l0_max);
  MakeActiveImmutableLocked();
  immutable_queued_ = true;
}

void Region::StartCompactionLocked() {
  KVS_CHECK(!compacting_);
  immutable_queued_ = false;
  compacting_ = true;
  context_.compactions->Submit([this] { BackgroundCompaction(); });
}

void Region::RequestCompaction() {
  std::unique_lock<std::mutex> stall_lock(stall_mutex_);
  if (compacting_ || !background_error_.ok() ||
      (immutable_queued_ && quiesce_waiters_ > 0)) {
    return;
  }
  std::unique_lock<std::shared_mutex> lock(l0_mutex_);
  if (!immutables_.empty()) {
    // Left by a compaction that found the volume full (or queued behind a
    // job that ended for a catch-up): start it.
    StartCompactionLocked();
  } else if (active_->EntryCount() > 0) {
    SwitchL0Locked();
  }
}

Region::L0Memory Region::L0MemoryBytes() const {
  std::shared_lock<std::shared_mutex> lock(l0_mutex_);
  L0Memory memory{active_->MemoryBytes(), 0};
  for (const Immutable& immutable : immutables_) {
    memory.immutable += immutable.table->MemoryBytes();
  }
  return memory;
}

Status Region::ReadLarge(const LogPointer& pointer, std::string_view key,
                         std::string* value) const {
  std::string record;
  if (!large_log_->ReadBuffered(pointer.device_offset, pointer.record_size,
                                &record)) {
    if (context_.records != nullptr) {
      // On the device: checked (checksum, key) and cached as the levels'
      // values are.
      return context_.records->ReadValue(pointer.device_offset,
                                         pointer.record_size, key, value);
    }
    KVS_RETURN_IF_ERROR(
        large_log_->Read(pointer.device_offset, pointer.record_size, &record));
  }
  if (record.size() < log::kRecordHeaderBytes) {
    return Status::Corruption("large log record too short");
  }
  const uint32_t value_size = coding::DecodeFixed32(record.data() + 12);
  const uint16_t key_size = coding::DecodeFixed16(record.data() + 16);
  const bool has_id =
      (static_cast<uint8_t>(record[19]) & log::kRecordHasWriteId) != 0;
  if (log::kRecordHeaderBytes + key_size + value_size +
          (has_id ? log::kWriteIdBytes : 0) !=
      record.size()) {
    return Status::Corruption("large log record at " +
                              std::to_string(pointer.device_offset) +
                              " does not match its pointer");
  }
  value->assign(record, log::kRecordHeaderBytes + key_size, value_size);
  return Status::Ok();
}

Status Region::ResolveL0(const L0Table::Entry& entry,
                         std::string* value) const {
  switch (entry.kind) {
    case kL0InPlace:
      value->assign(entry.payload);
      return Status::Ok();
    case kL0LargePointer: {
      LogPointer pointer;
      KVS_CHECK(DecodeLogPointer(entry.payload, &pointer));
      return ReadLarge(pointer, entry.key, value);
    }
    case kL0Tombstone:
      return Status::NotFound("deleted");
  }
  KVS_CHECK_MSG(false, "unknown L0 entry kind");
  return Status::Internal("unreachable");
}

Status Region::ResolveLevel(std::string_view key, const btree::LeafValue& leaf,
                            std::string* value) const {
  switch (leaf.kind) {
    case btree::EntryKind::kPutInline:
      value->assign(leaf.inline_bytes);
      return Status::Ok();
    case btree::EntryKind::kPutInLog:
      value_read_bytes_.fetch_add(leaf.log_record_size_bytes,
                                  std::memory_order_relaxed);
      return context_.records->ReadValue(
          leaf.log_offset, leaf.log_record_size_bytes, key, value);
    case btree::EntryKind::kDelete:
      return Status::NotFound("deleted");
  }
  return Status::Corruption("unknown leaf entry kind");
}

Status Region::Get(std::string_view key, std::string* value) {
  load_sample_.Note(gets_.fetch_add(1, std::memory_order_relaxed), key);
  if (!origin_.bounds.Contains(key)) {
    // The levels a split region shares with its sibling hold the sibling's
    // keys too.
    return Status::NotFound("no such key");
  }
  const auto [active, immutables, levels] = TablesNow();
  L0Table::Entry entry;
  if (active->Get(key, &entry)) return ResolveL0(entry, value);
  for (const auto& immutable : immutables) {
    if (immutable->Get(key, &entry)) return ResolveL0(entry, value);
  }
  std::string leaf_buffer;
  for (const auto& level : levels) {
    if (level == nullptr || !level->MayContain(key)) {
      continue;
    }
    btree::LeafValue leaf;
    bool found = false;
    KVS_RETURN_IF_ERROR(level->tree().Get(key, &leaf_buffer, &leaf, &found));
    if (found) {
      return ResolveLevel(key, leaf, value);
    }
  }
  return Status::NotFound("no such key");
}

std::unique_ptr<RegionIterator> Region::NewIterator(
    std::optional<std::string> upper_bound,
    std::optional<std::string> lower_bound) const {
  std::vector<std::shared_ptr<L0Table>> tables;
  std::vector<std::shared_ptr<Level>> levels;
  uint64_t snapshot;
  {
    // Writers hold this shared while appending and inserting, so taking it
    // exclusively would be needed for an exact cut; the LSN read here is a
    // bound instead: L0 entries above it are skipped.
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    snapshot = lsn_.load();
    tables.push_back(active_);
    for (auto it = immutables_.rbegin(); it != immutables_.rend(); ++it) {
      tables.push_back(it->table);
    }
    levels = ReadOrderLevelsLocked();
  }
  return std::make_unique<RegionIterator>(
      this, snapshot, std::move(tables), std::move(levels),
      origin_.bounds.ClampUpper(std::move(upper_bound)),
      origin_.bounds.ClampLower(std::move(lower_bound)));
}

Status Region::Sync() {
  KVS_RETURN_IF_ERROR(small_log_->SyncTo(small_log_->appended_position()));
  return large_log_->SyncTo(large_log_->appended_position());
}

Status Region::Flush() { return Sync(); }

std::map<uint64_t, uint64_t> Region::LogSegments(log::LogKind kind) const {
  return (kind == log::LogKind::kLarge ? large_log_ : small_log_)->segments();
}

Region::Served Region::ServedNow() const {
  Served served;
  std::shared_lock<std::shared_mutex> lock(l0_mutex_);
  served.levels = ReadOrderLevelsLocked();
  served.l0_entries = active_->EntryCount();
  for (const Immutable& immutable : immutables_) {
    served.l0_entries += immutable.table->EntryCount();
  }
  served.last_lsn = lsn_.load();
  served.compacted_lsn = compacted_lsn_;
  return served;
}

Status Region::StoppedBy() const {
  {
    std::lock_guard<std::mutex> lock(stall_mutex_);
    if (!background_error_.ok()) return background_error_;
  }
  for (const log::LogWriter* log : {small_log_.get(), large_log_.get()}) {
    if (log == nullptr) continue;
    const Status failure = log->failure();
    if (!failure.ok()) {
      return failure.WithContext("region " + name_ + " stopped: ");
    }
  }
  return Status::Ok();
}

RegionStats Region::stats() const {
  RegionStats stats;
  stats.recovery = recovery_;
  stats.puts = puts_.load();
  stats.deletes = deletes_.load();
  stats.gets = gets_.load();
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    stats.l0_bytes = active_->MemoryBytes();
    stats.l0_entries = active_->EntryCount();
    stats.l0_kv_bytes = active_kv_bytes_.load(std::memory_order_relaxed);
    for (const Immutable& immutable : immutables_) {
      stats.l0_bytes += immutable.table->MemoryBytes();
      stats.l0_kv_bytes += immutable.kv_bytes;
      stats.l0_entries += immutable.table->EntryCount();
    }
    stats.immutable_l0s = immutables_.size();
  }
  stats.stalls = stalls_.load();
  stats.stall_micros = stall_micros_.load();
  stats.budget_stalls = budget_stalls_.load();
  stats.small_log_bytes = small_log_->stats().appended_bytes;
  stats.large_log_bytes = large_log_->stats().appended_bytes;
  stats.last_lsn = lsn_.load();
  stats.compactions = compactions_.load();
  stats.l0s_merged = l0s_merged_.load();
  stats.l0_merges = l0_merges_.load();
  stats.compaction_micros = compaction_micros_.load();
  stats.gc_relocated_bytes = gc_relocated_bytes_.load();
  stats.gc_freed_segments = gc_freed_segments_.load();
  stats.large_log_segments = large_log_->segments().size();
  stats.compaction_bytes_written = compaction_bytes_.load();
  stats.compaction_bytes_read = compaction_read_bytes_.load();
  stats.medium_log_bytes = medium_log_bytes_.load();
  stats.value_bytes_read = value_read_bytes_.load();
  stats.gc_bytes_read = gc_read_bytes_.load();
  for (size_t i = 0; i < kStatsLevels; ++i) {
    stats.level_bytes_read[i] = level_read_bytes_[i].load();
    stats.level_bytes_written[i] = level_written_bytes_[i].load();
  }
  std::vector<uint64_t> segments;
  {
    std::shared_lock<std::shared_mutex> lock(l0_mutex_);
    for (const auto& level : ReadOrderLevelsLocked()) {
      stats.level_count++;
      double inside = 1;
      if (!origin_.bounds.unbounded() &&
          !level->tree()
               .EstimateFraction(origin_.bounds.lower,
                                 origin_.bounds.upper.has_value()
                                     ? &*origin_.bounds.upper
                                     : nullptr,
                                 &inside)
               .ok()) {
        inside = 1;  // a read error: counted whole (an upper bound)
      }
      stats.level_kv_bytes += static_cast<uint64_t>(
          static_cast<double>(level->descriptor().kv_bytes) * inside);
      if (!origin_.ancestors.empty()) {
        const std::vector<uint64_t> its = level->descriptor().AllSegments();
        segments.insert(segments.end(), its.begin(), its.end());
      }
    }
  }
  if (!origin_.ancestors.empty()) {
    // Only a region split from another can share (Engine::SplitRegion).
    for (const auto& [index, segment] : large_log_->segments()) {
      segments.push_back(segment);
    }
    for (const uint64_t segment : segments) {
      if (context_.volume->References(segment) > 1) ++stats.shared_segments;
    }
  }
  {
    std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(gc_mutex_));
    for (const auto& [segment, bytes] : large_garbage_) {
      stats.large_garbage_bytes += bytes;
    }
  }
  return stats;
}

}  // namespace kvs::lsm
