#include "log/log_writer.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::log {
namespace {

constexpr uint64_t kBlock = limits::io_alignment_bytes;
constexpr uint64_t kSegmentBytes = limits::segment_size_bytes;

uint64_t AlignDown(uint64_t value) { return value & ~(kBlock - 1); }
uint64_t AlignUp(uint64_t value) { return AlignDown(value + kBlock - 1); }

uint64_t RandomNonce() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine();
}

// Room always kept at a segment's end for the end record and a sync mark.
constexpr size_t kSegmentReserveBytes = 2 * kRecordHeaderBytes + 8;

}  // namespace

LogWriter::LogWriter(alloc::Volume* volume, io::SyncGroup* sync_group,
                     LogIdentity identity, const LogWriterOptions& options)
    : volume_(volume),
      sync_group_(sync_group),
      identity_(std::move(identity)),
      options_(options),
      chunk_(io::ZeroPages::OrDie(options.chunk_bytes)) {}

Status LogWriter::Open(alloc::Volume* volume, io::SyncGroup* sync_group,
                       LogIdentity identity, const LogWriterOptions& options,
                       const LogTail* tail,
                       std::unique_ptr<LogWriter>* writer) {
  KVS_CHECK(options.chunk_bytes >= 2 * kBlock &&
            options.chunk_bytes % kBlock == 0);
  std::unique_ptr<LogWriter> opened(
      new LogWriter(volume, sync_group, std::move(identity), options));
  std::lock_guard<std::mutex> lock(opened->mutex_);
  if (tail != nullptr && !tail->segments.empty()) {
    opened->segments_ = tail->segments;
    opened->chain_index_ = tail->segments.rbegin()->first;
    opened->segment_ = tail->segments.rbegin()->second;
    opened->nonce_ = tail->nonce;
    opened->stats_.segments = tail->segments.size();
    opened->segment_put_bytes_ = tail->last_put_bytes;
    opened->segment_max_lsn_ = tail->last_max_lsn;
    {
      // Reload the tail's partial block, so that the writer is where the log
      // ends (past its end record if it is ended: a catch-up reports the
      // segment's bytes up to appended_position()); the segment is ended
      // there if it is not yet.
      const uint64_t end = tail->end_offset_in_segment;
      KVS_CHECK(tail->partial_block.size() == end - AlignDown(end));
      opened->chunk_start_ = AlignDown(end);
      // Those bytes are on the device already: nothing is written before
      // the first append (a cut log keeps the dropped bytes after its end
      // as they are, so a reopen before then finds the same cut).
      opened->written_end_ = end;
      std::memcpy(opened->chunk_.data(), tail->partial_block.data(),
                  tail->partial_block.size());
      opened->fill_ = tail->partial_block.size();
      if (!tail->header_valid) {
        KVS_CHECK(!tail->ended);
        // Committed but its header never reached the device: write one,
        // so that the segment reads as a valid, empty, ended segment.
        KVS_CHECK(end == kSegmentHeaderBytes);
        opened->chunk_start_ = 0;
        opened->written_end_ = 0;
        opened->fill_ = kSegmentHeaderBytes;
        opened->nonce_ = RandomNonce();
        EncodeSegmentHeader(
            {opened->identity_.region_id, opened->identity_.kind,
             opened->chain_index_, opened->nonce_},
            opened->chunk_.data());
      }
    }
  }
  // The recovered tail segment is ended (if not ended yet) and a new one
  // committed at the first append; the volume's sync makes the end record
  // durable with it. A log with no segment yet gets its first one then
  // too, so an empty region costs no space.
  if (tail != nullptr && !tail->segments.empty()) {
    opened->current_ended_ = tail->ended;
    opened->roll_pending_ = true;
    opened->next_chain_index_ = opened->chain_index_ + 1;
    opened->dropped_ = tail->dropped;
    opened->dropped_catalog_keys_ = tail->dropped_catalog_keys;
    if (!tail->dropped.empty()) {
      KVS_CHECK(tail->dropped.begin()->first > opened->chain_index_);
      opened->next_chain_index_ = tail->dropped.rbegin()->first + 1;
    }
  }
  *writer = std::move(opened);
  return Status::Ok();
}

uint64_t LogWriter::PositionLocked() const {
  return alloc::DeviceOffset(chain_index_, chunk_start_ + fill_);
}

Status LogWriter::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_;
}

uint64_t LogWriter::appended_position() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return PositionLocked();
}

Status LogWriter::FailLocked(Status status) {
  if (failed_.ok()) {
    failed_ = Status::FromCode(status.code(),
                               std::string("log stopped after an error: ") +
                                   std::string(status.message()));
  }
  return failed_;
}

Status LogWriter::WriteLocked(const IoLock& io) {
  KVS_CHECK(io.owns_lock() && io.mutex() == &io_mutex_);
  const uint64_t end = chunk_start_ + fill_;
  if (end <= written_end_) {
    return Status::Ok();
  }
  const uint64_t from = AlignDown(written_end_);
  KVS_CHECK(from >= chunk_start_);
  const uint64_t to = AlignUp(end);
  const Status status = volume_->file()->Write(
      alloc::DeviceOffset(segment_, from),
      std::string_view(chunk_.data() + (from - chunk_start_), to - from));
  if (!status.ok()) {
    // Refused for lack of space, the bytes are still in the chunk and the
    // next write puts them there; after any other error, stop.
    return status.IsNoSpace() ? status : FailLocked(status);
  }
  stats_.written_bytes += to - from;
  written_end_ = end;
  return Status::Ok();
}

Status LogWriter::WriteOutside(const IoLock& io) {
  KVS_CHECK(io.owns_lock() && io.mutex() == &io_mutex_);
  uint64_t segment = 0, from = 0, end = 0;
  io::AlignedBuffer bytes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failed_.ok()) {
      return failed_;
    }
    end = chunk_start_ + fill_;
    if (segments_.empty() || end <= written_end_) {
      return Status::Ok();
    }
    // The chunk may change once the lock is let go (appends fill its last
    // block); the copy is what this write puts on the device. Nothing else
    // writes this log meanwhile (io_mutex_), and no roll changes segment_.
    from = AlignDown(written_end_);
    KVS_CHECK(from >= chunk_start_);
    bytes.Resize(AlignUp(end) - from);
    std::memcpy(bytes.data(), chunk_.data() + (from - chunk_start_),
                end - from);
    segment = segment_;
  }
  const Status status =
      volume_->file()->Write(alloc::DeviceOffset(segment, from), bytes.view());
  std::lock_guard<std::mutex> lock(mutex_);
  if (!status.ok()) {
    return status.IsNoSpace() ? status : FailLocked(status);
  }
  KVS_CHECK(segment == segment_);
  stats_.written_bytes += bytes.size();
  written_end_ = std::max(written_end_, end);
  return Status::Ok();
}

void LogWriter::MakeRoomInChunkLocked(size_t record_size) {
  if (fill_ + record_size <= chunk_.size()) {
    return;
  }
  // Everything up to the last partial block is on the device now; keep that
  // block at the front of the chunk, since it will be written again.
  const uint64_t end = chunk_start_ + fill_;
  const uint64_t keep_from = AlignDown(end);
  const size_t kept = end - keep_from;
  const size_t needed = AlignUp(kept + record_size);
  if (needed > chunk_.size()) {
    io::ZeroPages larger = io::ZeroPages::OrDie(needed);
    std::memcpy(larger.data(), chunk_.data() + (keep_from - chunk_start_),
                kept);
    chunk_ = std::move(larger);
  } else {
    std::memmove(chunk_.data(), chunk_.data() + (keep_from - chunk_start_),
                 kept);
    std::memset(chunk_.data() + kept, 0, chunk_.size() - kept);
  }
  if (chunk_.size() > options_.chunk_bytes && needed <= options_.chunk_bytes) {
    io::ZeroPages normal = io::ZeroPages::OrDie(options_.chunk_bytes);
    std::memcpy(normal.data(), chunk_.data(), kept);
    chunk_ = std::move(normal);
  }
  chunk_start_ = keep_from;
  fill_ = kept;
}

Status LogWriter::EnsureChunkRoomLocked(size_t bytes, const IoLock& io) {
  if (fill_ + bytes <= chunk_.size()) {
    return Status::Ok();
  }
  KVS_RETURN_IF_ERROR(WriteLocked(io));
  MakeRoomInChunkLocked(bytes);
  return Status::Ok();
}

void LogWriter::AppendLocked(const Record& record, AppendResult* result) {
  const size_t size = record.EncodedSize();
  KVS_CHECK(fill_ + size <= chunk_.size());
  KVS_CHECK(chunk_start_ + fill_ + size <= kSegmentBytes);
  EncodeRecord(record, nonce_, chunk_.data() + fill_);
  if (identity_.on_append) {
    identity_.on_append({chain_index_, segment_, chunk_start_ + fill_,
                         std::string_view(chunk_.data() + fill_, size)});
  }
  result->lsn = record.lsn;
  result->device_offset = alloc::DeviceOffset(segment_, chunk_start_ + fill_);
  result->size = static_cast<uint32_t>(size);
  fill_ += size;
  result->end_position = PositionLocked();
  stats_.appended_bytes += size;
}

Status LogWriter::RollLocked(const IoLock& io) {
  uint64_t segment = 0;
  const Status reserved = volume_->Reserve(&segment);
  if (!reserved.ok()) {
    return reserved.IsNoSpace() ? reserved : FailLocked(reserved);
  }
  const bool first = segments_.empty();
  if (!first) {
    Status ended = Status::Ok();
    if (!current_ended_) {
      // Append always leaves room in the segment for this end record.
      ended = EnsureChunkRoomLocked(kRecordHeaderBytes, io);
      if (ended.ok()) {
        AppendResult ignored;
        AppendLocked({0, RecordType::kSegmentEnd, {}, {}, {}}, &ignored);
        current_ended_ = true;
      }
    }
    // The end record must be on the device before the batch that names the
    // next segment is durable (the commit's sync covers it).
    if (ended.ok()) {
      ended = WriteLocked(io);
    }
    if (!ended.ok()) {
      volume_->Unreserve(segment);
      return ended;
    }
  }
  const uint64_t chain_index = first ? 0 : next_chain_index_;
  alloc::MetadataBatch batch;
  batch.Allocate(segment);
  for (const auto& [dropped_index, dropped_segment] : dropped_) {
    batch.Free(dropped_segment);
    batch.Delete(SegmentCatalogKey(identity_.catalog_prefix, dropped_index));
  }
  for (const std::string& key : dropped_catalog_keys_) {
    batch.Delete(key);
  }
  const SealedSegment sealed{chain_index_, segment_, segment_put_bytes_,
                             segment_max_lsn_};
  if (!first && identity_.on_seal) {
    identity_.on_seal(sealed, &batch);
  }
  char value[8];
  coding::EncodeFixed64(value, segment);
  batch.Put(SegmentCatalogKey(identity_.catalog_prefix, chain_index),
            std::string_view(value, sizeof(value)));
  const Status committed = volume_->Commit(batch);
  if (!committed.ok()) {
    volume_->Unreserve(segment);
    return committed.IsNoSpace() ? committed : FailLocked(committed);
  }
  if (!first && identity_.on_sealed) {
    identity_.on_sealed(sealed);
  }
  dropped_.clear();
  dropped_catalog_keys_.clear();
  roll_pending_ = false;
  current_ended_ = false;
  segments_[chain_index] = segment;
  segment_ = segment;
  chain_index_ = chain_index;
  next_chain_index_ = chain_index + 1;
  nonce_ = RandomNonce();
  segment_put_bytes_ = 0;
  segment_max_lsn_ = 0;
  if (chunk_.size() != options_.chunk_bytes) {
    chunk_ = io::ZeroPages::OrDie(options_.chunk_bytes);
  } else {
    chunk_.Zero(0, chunk_.size());  // its pages go back until written
  }
  EncodeSegmentHeader(
      {identity_.region_id, identity_.kind, chain_index, nonce_},
      chunk_.data());
  chunk_start_ = 0;
  fill_ = kSegmentHeaderBytes;
  written_end_ = 0;
  if (identity_.on_append) {
    identity_.on_append({chain_index_, segment_, 0,
                         std::string_view(chunk_.data(), kSegmentHeaderBytes)});
  }
  ++stats_.segments;
  return Status::Ok();
}

Status LogWriter::Append(RecordType type, std::string_view key,
                         std::string_view value,
                         std::atomic<uint64_t>* lsn_source, uint64_t lsn,
                         AppendResult* result, WriteId write_id,
                         bool continues_batch) {
  KVS_CHECK(type == RecordType::kPut || type == RecordType::kDelete);
  KVS_CHECK(key.size() <= limits::key_size_bytes_max &&
            value.size() <= limits::value_size_bytes_max);
  const size_t size = kRecordHeaderBytes + key.size() + value.size() +
                      (write_id.present() ? kWriteIdBytes : 0);
  IoLock io(io_mutex_, std::defer_lock);
  std::unique_lock<std::mutex> lock(mutex_);
  if (AppendMayWriteLocked(size)) {
    // In lock order; what changed meanwhile is looked at again below.
    lock.unlock();
    io.lock();
    lock.lock();
  }
  if (!failed_.ok()) {
    return failed_;
  }
  const bool roll = RollDueLocked(size);
  // Everything that can fail comes before the LSN is taken.
  const bool mark = durable_position_ > marked_position_;
  const size_t needed = size + (mark ? kRecordHeaderBytes + 8 : 0);
  // Without io_mutex_ nothing changed since AppendMayWriteLocked, which
  // counted the room for a mark.
  KVS_CHECK_MSG(io.owns_lock() || (!roll && fill_ + needed <= chunk_.size()),
                "an append that writes without io_mutex_");
  if (roll) {
    KVS_RETURN_IF_ERROR(RollLocked(io));
  }
  KVS_RETURN_IF_ERROR(EnsureChunkRoomLocked(needed, io));
  if (mark) {
    char position[8];
    coding::EncodeFixed64(position, durable_position_);
    AppendResult ignored;
    AppendLocked({0,
                  RecordType::kSyncMark,
                  {},
                  std::string_view(position, sizeof(position)),
                  {}},
                 &ignored);
    marked_position_ = durable_position_;
  }
  if (lsn_source != nullptr) {
    lsn = lsn_source->fetch_add(1, std::memory_order_relaxed) + 1;
  }
  AppendLocked({lsn, type, key, value, write_id, continues_batch}, result);
  if (type == RecordType::kPut) {
    segment_put_bytes_ += result->size;
  }
  segment_max_lsn_ = std::max(segment_max_lsn_, lsn);
  return Status::Ok();
}

Status LogWriter::ReserveRoom(size_t bytes) {
  KVS_CHECK(kSegmentHeaderBytes + bytes + kSegmentReserveBytes <=
            kSegmentBytes);
  const IoLock io(io_mutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.ok()) {
    return failed_;
  }
  return RollDueLocked(bytes) ? RollLocked(io) : Status::Ok();
}

bool LogWriter::RollDueLocked(size_t size) const {
  return segments_.empty() || roll_pending_ || current_ended_ ||
         chunk_start_ + fill_ + size + kSegmentReserveBytes > kSegmentBytes;
}

bool LogWriter::AppendMayWriteLocked(size_t size) const {
  return RollDueLocked(size) ||
         fill_ + size + kRecordHeaderBytes + 8 > chunk_.size();
}

bool LogWriter::AppendMayWrite(size_t key_bytes, size_t value_bytes) const {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  return !lock.owns_lock() ||
         AppendMayWriteLocked(kRecordHeaderBytes + key_bytes + value_bytes);
}

Status LogWriter::EndTail() {
  const IoLock io(io_mutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.ok()) {
    return failed_;
  }
  if (segments_.empty()) {
    return Status::Ok();
  }
  if (!current_ended_) {
    KVS_RETURN_IF_ERROR(EnsureChunkRoomLocked(kRecordHeaderBytes, io));
    AppendResult ignored;
    AppendLocked({0, RecordType::kSegmentEnd, {}, {}, {}}, &ignored);
    current_ended_ = true;
  }
  KVS_RETURN_IF_ERROR(WriteLocked(io));
  if (dropped_.empty() && dropped_catalog_keys_.empty()) {
    // Nothing to commit: a sync makes the end record durable.
    const Status synced = sync_group_->SyncThrough(sync_group_->Ticket());
    if (!synced.ok()) return FailLocked(synced);
    durable_position_ = std::max(durable_position_, PositionLocked());
    return Status::Ok();
  }
  // The commit's sync covers the end record, written before it.
  alloc::MetadataBatch batch;
  for (const auto& [dropped_index, dropped_segment] : dropped_) {
    batch.Free(dropped_segment);
    batch.Delete(SegmentCatalogKey(identity_.catalog_prefix, dropped_index));
  }
  for (const std::string& key : dropped_catalog_keys_) {
    batch.Delete(key);
  }
  const Status committed = volume_->Commit(batch);
  if (!committed.ok()) {
    return committed.IsNoSpace() ? committed : FailLocked(committed);
  }
  dropped_.clear();
  dropped_catalog_keys_.clear();
  durable_position_ = std::max(durable_position_, PositionLocked());
  return Status::Ok();
}

Status LogWriter::ExportTail(LogTail* tail) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.ok()) return failed_;
  *tail = LogTail{};
  if (segments_.empty()) return Status::Ok();  // never appended: a new log
  const uint64_t end = chunk_start_ + fill_;
  if (!current_ended_ || written_end_ != end || !dropped_.empty() ||
      !dropped_catalog_keys_.empty()) {
    return Status::Internal(
        "a log's tail is exported only once EndTail has ended it");
  }
  tail->segments = segments_;
  tail->end_offset_in_segment = end;
  tail->nonce = nonce_;
  tail->ended = true;
  tail->partial_block.assign(chunk_.data() + (AlignDown(end) - chunk_start_),
                             end - AlignDown(end));
  tail->last_put_bytes = segment_put_bytes_;
  tail->last_max_lsn = segment_max_lsn_;
  return Status::Ok();
}

Status LogWriter::Write() {
  const IoLock io(io_mutex_);
  return WriteOutside(io);
}

Status LogWriter::SyncTo(uint64_t position) {
  uint64_t ticket = 0;
  uint64_t covered = 0;
  {
    IoLock io(io_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_.ok()) {
        return failed_;
      }
      if (durable_position_ >= position || segments_.empty()) {
        return Status::Ok();
      }
      // What the write below covers: appends after this are not (their
      // bytes may be copied, but a later sync names them).
      covered = PositionLocked();
    }
    KVS_RETURN_IF_ERROR(WriteOutside(io));
    ticket = sync_group_->Ticket();
  }
  const Status synced = sync_group_->SyncThrough(ticket);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!synced.ok()) {
    return FailLocked(synced);
  }
  durable_position_ = std::max(durable_position_, covered);
  return Status::Ok();
}

bool LogWriter::ReadBuffered(uint64_t device_offset, size_t size,
                             std::string* out) const {
  const uint64_t segment = alloc::SegmentOf(device_offset);
  const uint64_t offset = alloc::OffsetInSegment(device_offset);
  std::lock_guard<std::mutex> lock(mutex_);
  if (segment == segment_ && offset >= chunk_start_ &&
      offset + size <= chunk_start_ + fill_) {
    out->assign(chunk_.data() + (offset - chunk_start_), size);
    return true;
  }
  return false;
}

Status LogWriter::Read(uint64_t device_offset, size_t size,
                       std::string* out) const {
  // Bytes in the chunk may not be on the device yet; everything else of
  // the log is (a reopened log's chunk may hold none of its tail segment).
  if (ReadBuffered(device_offset, size, out)) return Status::Ok();
  const uint64_t from = AlignDown(device_offset);
  const uint64_t to = AlignUp(device_offset + size);
  io::AlignedBuffer buffer(to - from);
  KVS_RETURN_IF_ERROR(volume_->file()->Read(from, to - from, buffer.data()));
  out->assign(buffer.data() + (device_offset - from), size);
  return Status::Ok();
}

std::map<uint64_t, uint64_t> LogWriter::segments() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return segments_;
}

std::vector<ReleasedSegment> LogWriter::ReleaseSegmentsBefore(
    uint64_t chain_index, alloc::MetadataBatch* batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t limit = std::min(chain_index, chain_index_);
  std::vector<ReleasedSegment> released;
  for (auto it = segments_.begin();
       it != segments_.end() && it->first < limit;) {
    released.push_back({it->first, it->second});
    batch->Free(it->second);
    batch->Delete(SegmentCatalogKey(identity_.catalog_prefix, it->first));
    ++it;
  }
  return released;
}

void LogWriter::Forget(const std::vector<ReleasedSegment>& released) {
  std::lock_guard<std::mutex> lock(mutex_);
  // By chain index: once the release is committed the segment may already
  // be this log's newest again (a roll reused it), under a later index.
  for (const ReleasedSegment& segment : released) {
    const auto it = segments_.find(segment.chain_index);
    if (it != segments_.end() && it->second == segment.segment) {
      KVS_CHECK(segment.chain_index < chain_index_);
      segments_.erase(it);
    }
  }
}

ReleasedSegment LogWriter::ReleaseSegment(uint64_t segment,
                                          alloc::MetadataBatch* batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  KVS_CHECK_MSG(segment != segment_, "releasing the current log segment");
  for (auto it = segments_.begin(); it != segments_.end(); ++it) {
    if (it->second == segment) {
      const ReleasedSegment released{it->first, segment};
      batch->Free(segment);
      batch->Delete(SegmentCatalogKey(identity_.catalog_prefix, it->first));
      return released;
    }
  }
  KVS_CHECK_MSG(false, "releasing a segment the log does not own");
  return {};
}

LogWriterStats LogWriter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kvs::log
