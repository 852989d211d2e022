#include "alloc/volume.h"

#include <algorithm>
#include <cstring>

#include "alloc/checkpoint.h"
#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "util/check.h"
#include "util/crc32c.h"
#include "util/limits.h"

namespace kvs::alloc {
namespace {

constexpr uint64_t kSegmentBytes = limits::segment_size_bytes;
constexpr uint64_t kSuperblockSegment = 0;

}  // namespace

Volume::Volume(std::unique_ptr<io::File> file, const VolumeOptions& options)
    : file_(std::move(file)), options_(options) {}

Volume::~Volume() = default;

Status Volume::Create(std::unique_ptr<io::File> file,
                      const VolumeOptions& options,
                      std::unique_ptr<Volume>* volume) {
  std::unique_ptr<Volume> created(new Volume(std::move(file), options));
  const uint64_t segments = 1 + options.grow_step_segments;
  KVS_RETURN_IF_ERROR(created->file_->Grow(segments * kSegmentBytes));
  created->allocated_.Grow(segments);
  created->in_use_.Grow(segments);
  created->allocated_.Insert(kSuperblockSegment);
  created->in_use_.Insert(kSuperblockSegment);
  created->superblock_.volume_id = RandomVolumeId();
  {
    std::lock_guard<std::mutex> lock(created->mutex_);
    KVS_RETURN_IF_ERROR(created->CheckpointLocked());
  }
  *volume = std::move(created);
  return Status::Ok();
}

Status Volume::Open(std::unique_ptr<io::File> file,
                    const VolumeOptions& options,
                    std::unique_ptr<Volume>* volume) {
  std::unique_ptr<Volume> opened(new Volume(std::move(file), options));
  io::File* device = opened->file_.get();
  if (device->Size() < 2 * kSuperblockBytes) {
    return Status::NotFound("not a KVS volume: too small");
  }
  io::AlignedBuffer blocks(2 * kSuperblockBytes);
  KVS_RETURN_IF_ERROR(device->Read(0, blocks.size(), blocks.data()));
  Superblock copies[2];
  Status results[2];
  for (int i = 0; i < 2; ++i) {
    results[i] = Superblock::Decode(
        blocks.view().substr(kSuperblockOffsets[i], kSuperblockBytes),
        &copies[i]);
  }
  for (const Status& result : results) {
    // A copy a newer KVS wrote: the other copy is older metadata, never to
    // be read in its place.
    if (result.code() == Status::Code::kInvalidArgument) return result;
  }
  int chosen = -1;
  for (int i = 0; i < 2; ++i) {
    if (results[i].ok() &&
        (chosen < 0 || copies[i].sequence > copies[chosen].sequence)) {
      chosen = i;
    }
  }
  if (chosen < 0) {
    if (results[0].IsNotFound() && results[1].IsNotFound()) {
      return Status::NotFound("not a KVS volume: no superblock");
    }
    return Status::Corruption(
        "both superblock copies are damaged: " + results[0].ToString() + "; " +
        results[1].ToString());
  }
  std::lock_guard<std::mutex> lock(opened->mutex_);
  opened->superblock_ = copies[chosen];
  KVS_RETURN_IF_ERROR(opened->LoadCheckpoint(opened->superblock_));

  RedoReplay replay;
  KVS_RETURN_IF_ERROR(ReplayRedoLog(
      device, opened->superblock_,
      [&](const MetadataBatch& batch) -> Status {
        return opened->ReplayLocked(batch);
      },
      &replay));
  for (uint64_t segment : replay.segments) {
    if (segment >= opened->allocated_.capacity()) {
      return Status::Corruption("redo chain links segment " +
                                std::to_string(segment) +
                                " beyond the end of the volume");
    }
    if (!opened->allocated_.Contains(segment)) {
      opened->allocated_.Insert(segment);
    }
  }
  opened->in_use_ = opened->allocated_;
  opened->redo_segments_ = replay.segments;
  opened->redo_ = opened->MakeRedoWriter(opened->superblock_.generation);
  opened->redo_->Resume(replay.end);
  if (opened->superblock_.format_version < kSuperblockFormatVersion) {
    const uint32_t from = opened->superblock_.format_version;
    // Twice, so that both superblock copies carry the new version: a build
    // that reads only the old one must refuse the volume, not fall back to
    // the older copy (whose checkpoint and redo chain are freed by then).
    Status upgraded = opened->CheckpointLocked();
    if (upgraded.ok()) upgraded = opened->CheckpointLocked();
    if (!upgraded.ok()) {
      return Status::FromCode(
          upgraded.code(),
          "upgrading the volume from format " + std::to_string(from) + " to " +
              std::to_string(kSuperblockFormatVersion) +
              " (a checkpoint): " + std::string(upgraded.message()));
    }
  }
  *volume = std::move(opened);
  return Status::Ok();
}

std::unique_ptr<RedoLogWriter> Volume::MakeRedoWriter(uint64_t generation) {
  return std::make_unique<RedoLogWriter>(
      file_.get(), superblock_.volume_id, generation,
      [this](uint64_t* segment) {
        return ReserveLocked(segment, Purpose::kMetadata);
      },
      [this](uint64_t segment) { in_use_.Erase(segment); });
}

Status Volume::LoadCheckpoint(const Superblock& superblock) {
  const uint64_t capacity = file_->Size() / kSegmentBytes;
  io::AlignedBuffer buffer(kSegmentBytes);
  std::string blob;
  blob.reserve(superblock.checkpoint_bytes);
  for (uint64_t segment : superblock.checkpoint_segments) {
    if (segment == kSuperblockSegment || segment >= capacity) {
      return Status::Corruption("checkpoint segment " +
                                std::to_string(segment) + " is out of range");
    }
    KVS_RETURN_IF_ERROR(
        file_->Read(SegmentStart(segment), buffer.size(), buffer.data()));
    const uint64_t remaining = superblock.checkpoint_bytes - blob.size();
    blob.append(buffer.data(), std::min<uint64_t>(remaining, kSegmentBytes));
  }
  if (blob.size() != superblock.checkpoint_bytes ||
      crc32c::Mask(crc32c::Value(blob.data(), blob.size())) !=
          superblock.checkpoint_crc) {
    return Status::Corruption("checkpoint of generation " +
                              std::to_string(superblock.generation) +
                              " fails its checksum");
  }
  CheckpointImage checkpoint;
  KVS_RETURN_IF_ERROR(DecodeCheckpoint(blob, &checkpoint));
  if (checkpoint.generation != superblock.generation) {
    return Status::Corruption("checkpoint generation does not match");
  }
  if (checkpoint.allocated.capacity() > capacity) {
    return Status::Corruption(
        "volume is shorter than its metadata: " + std::to_string(capacity) +
        " segments on the device, " +
        std::to_string(checkpoint.allocated.capacity()) + " recorded");
  }
  allocated_ = std::move(checkpoint.allocated);
  allocated_.Grow(capacity);
  catalog_ = std::move(checkpoint.catalog);
  shares_ = std::move(checkpoint.shares);
  return Status::Ok();
}

namespace {

// Whether a segment appears twice among a batch's allocations and frees.
bool HasDuplicateSegments(const MetadataBatch& batch) {
  std::vector<uint64_t> all = batch.allocations();
  all.insert(all.end(), batch.frees().begin(), batch.frees().end());
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

}  // namespace

Status Volume::ReplayLocked(const MetadataBatch& batch) {
  if (HasDuplicateSegments(batch)) {
    return Status::Corruption(
        "redo batch names a segment twice among allocations and frees");
  }
  for (uint64_t segment : batch.allocations()) {
    if (segment >= allocated_.capacity() || allocated_.Contains(segment)) {
      return Status::Corruption("redo batch allocates segment " +
                                std::to_string(segment) +
                                " which is out of range or already allocated");
    }
  }
  const auto& allocations = batch.allocations();
  for (uint64_t segment : batch.shares()) {
    if (!allocated_.Contains(segment) &&
        std::find(allocations.begin(), allocations.end(), segment) ==
            allocations.end()) {
      return Status::Corruption("redo batch shares segment " +
                                std::to_string(segment) +
                                " which is not allocated");
    }
  }
  for (uint64_t segment : batch.frees()) {
    if (!allocated_.Contains(segment)) {
      return Status::Corruption("redo batch frees segment " +
                                std::to_string(segment) +
                                " which is not allocated");
    }
  }
  ApplyLocked(batch, /*release=*/false);
  return Status::Ok();
}

void Volume::ApplyLocked(const MetadataBatch& batch, bool release) {
  for (uint64_t segment : batch.allocations()) {
    allocated_.Insert(segment);
  }
  for (uint64_t segment : batch.shares()) {
    ++shares_[segment];
  }
  if (release) {
    // The freeing owner's readers keep these until ReleaseDeferred, also
    // if another owner drops the last reference meanwhile.
    for (uint64_t segment : batch.deferred_frees()) {
      ++pins_[segment];
    }
  }
  for (uint64_t segment : batch.frees()) {
    DropReferenceLocked(segment, release);
  }
  for (const auto& [key, value] : batch.puts()) {
    catalog_[key] = value;
  }
  for (const auto& key : batch.deletes()) {
    catalog_.erase(key);
  }
}

void Volume::DropReferenceLocked(uint64_t segment, bool release) {
  const auto shared = shares_.find(segment);
  if (shared != shares_.end()) {
    if (--shared->second == 0) shares_.erase(shared);
    return;  // another owner still references it
  }
  allocated_.Erase(segment);
  if (!release) return;
  if (pins_.count(segment) != 0) {
    freed_while_pinned_.insert(segment);
  } else {
    in_use_.Erase(segment);
  }
}

Status Volume::Reserve(uint64_t* segment) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failed_.ok()) {
      return failed_;
    }
    KVS_RETURN_IF_ERROR(ReserveLocked(segment, Purpose::kData));
  }
  if (reuse_hook_) reuse_hook_(*segment);
  return Status::Ok();
}

uint64_t Volume::FreeSegmentsLocked() const {
  return in_use_.capacity() - in_use_.count();
}

uint64_t Volume::MetadataHeadroomLocked() const {
  return 2 + superblock_.checkpoint_segments.size();
}

Status Volume::GrowLocked(uint64_t free_wanted) {
  uint64_t step = std::max<uint64_t>(1, options_.grow_step_segments);
  while (FreeSegmentsLocked() <= free_wanted) {
    const uint64_t capacity = in_use_.capacity() + step;
    const Status grown = file_->Grow(capacity * kSegmentBytes);
    if (grown.ok()) {
      allocated_.Grow(capacity);
      in_use_.Grow(capacity);
      continue;
    }
    if (!grown.IsNoSpace() || step == 1) {
      return grown.WithContext("volume full: ");
    }
    step /= 2;
  }
  return Status::Ok();
}

Status Volume::ReserveLocked(uint64_t* segment, Purpose purpose) {
  const uint64_t keep =
      purpose == Purpose::kData ? MetadataHeadroomLocked() : 0;
  if (FreeSegmentsLocked() <= keep) {
    const Status grown = GrowLocked(keep);
    if (!grown.ok()) {
      // A block device, or a file system without room: either way the
      // volume is full, and that passes once space is freed.
      return Status::NoSpace(grown.message());
    }
  }
  const std::optional<uint64_t> found = in_use_.FindAbsent(next_search_);
  KVS_CHECK(found.has_value());
  in_use_.Insert(*found);
  next_search_ = *found + 1;
  *segment = *found;
  return Status::Ok();
}

void Volume::ReleaseDeferred(uint64_t segment) {
  std::lock_guard<std::mutex> lock(mutex_);
  KVS_CHECK_MSG(pins_.count(segment) != 0,
                "releasing a segment that is not a deferred free");
  UnpinLocked(segment);
}

void Volume::Pin(const std::vector<uint64_t>& segments) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const uint64_t segment : segments) {
    KVS_CHECK_MSG(in_use_.Contains(segment),
                  "pinning a segment that is not in use");
    ++pins_[segment];
  }
}

void Volume::Unpin(const std::vector<uint64_t>& segments) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const uint64_t segment : segments) {
    UnpinLocked(segment);
  }
}

void Volume::UnpinLocked(uint64_t segment) {
  const auto pin = pins_.find(segment);
  KVS_CHECK_MSG(pin != pins_.end(), "unpinning a segment not pinned");
  if (--pin->second > 0) return;
  pins_.erase(pin);
  if (freed_while_pinned_.erase(segment) != 0) in_use_.Erase(segment);
}

void Volume::Unreserve(uint64_t segment) {
  std::lock_guard<std::mutex> lock(mutex_);
  KVS_CHECK_MSG(in_use_.Contains(segment) && !allocated_.Contains(segment),
                "unreserving a segment that is not reserved");
  in_use_.Erase(segment);
}

Status Volume::Commit(const MetadataBatch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.ok()) {
    return failed_;
  }
  // Checked before anything is written: a batch that named a segment twice
  // would be durable and then impossible to apply, on every open.
  KVS_CHECK_MSG(!HasDuplicateSegments(batch),
                "a metadata batch names a segment twice");
  for (uint64_t segment : batch.allocations()) {
    KVS_CHECK_MSG(in_use_.Contains(segment) && !allocated_.Contains(segment),
                  "committing an allocation of an unreserved segment");
  }
  for (uint64_t segment : batch.shares()) {
    KVS_CHECK_MSG(
        allocated_.Contains(segment) ||
            std::find(batch.allocations().begin(), batch.allocations().end(),
                      segment) != batch.allocations().end(),
        "sharing a segment that is not allocated");
  }
  for (uint64_t segment : batch.frees()) {
    KVS_CHECK_MSG(allocated_.Contains(segment),
                  "freeing a segment that is not allocated");
  }
  uint64_t linked = 0;
  const Status appended = redo_->Append(batch, &linked);
  if (linked != 0) {
    allocated_.Insert(linked);
    redo_segments_.push_back(linked);
  }
  if (!appended.ok()) {
    // Too large, or no space: nothing was written, and the next commit may
    // succeed. Anything else leaves the chain in an unknown state.
    return appended.code() == Status::Code::kInvalidArgument ||
                   appended.IsNoSpace()
               ? appended
               : Fail(appended);
  }
  ApplyLocked(batch, /*release=*/true);
  if (redo_->bytes_written() >= options_.checkpoint_redo_bytes) {
    const Status checkpointed = CheckpointLocked();
    // The batch is durable whatever happens to the checkpoint; one that
    // found no space is taken again at the next commit.
    if (!checkpointed.ok() && !checkpointed.IsNoSpace()) {
      return checkpointed;
    }
  }
  return Status::Ok();
}

Status Volume::Checkpoint() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_.ok()) {
    return failed_;
  }
  return CheckpointLocked();
}

Status Volume::CheckpointLocked() {
  const uint64_t generation = superblock_.generation + 1;
  const uint64_t next_sequence =
      redo_ ? redo_->position().next_sequence : uint64_t{1};
  uint64_t redo_first = 0;
  Status status = ReserveLocked(&redo_first, Purpose::kMetadata);
  if (!status.ok()) {
    return status;  // volume full: nothing changed
  }
  // Until the superblock names them, the new segments are only reserved:
  // a checkpoint that finds no space returns them and changes nothing.
  std::vector<uint64_t> blob_segments;
  auto give_up = [&](Status failure) {
    if (!failure.IsNoSpace()) {
      return Fail(failure);
    }
    in_use_.Erase(redo_first);
    for (uint64_t segment : blob_segments) {
      in_use_.Erase(segment);
    }
    return failure;
  };
  // The checkpoint owns what the metadata owns, minus the previous
  // checkpoint and redo chain (freed once this one is published), plus the
  // new chain's first segment and the checkpoint's own segments.
  CheckpointImage checkpoint;
  checkpoint.generation = generation;
  checkpoint.allocated = allocated_;
  for (uint64_t segment : superblock_.checkpoint_segments) {
    checkpoint.allocated.Erase(segment);
  }
  for (uint64_t segment : redo_segments_) {
    checkpoint.allocated.Erase(segment);
  }
  checkpoint.catalog = catalog_;
  checkpoint.shares = shares_;
  std::string blob;
  while (true) {
    checkpoint.allocated.Grow(in_use_.capacity());
    SegmentBitmap owned = checkpoint.allocated;
    owned.Insert(redo_first);
    for (uint64_t segment : blob_segments) {
      owned.Insert(segment);
    }
    std::swap(owned, checkpoint.allocated);
    blob = EncodeCheckpoint(checkpoint);
    std::swap(owned, checkpoint.allocated);
    const uint64_t needed = (blob.size() + kSegmentBytes - 1) / kSegmentBytes;
    if (blob_segments.size() >= needed) {
      break;
    }
    if (needed > kCheckpointSegmentsMax) {
      return Fail(Status::IoError("checkpoint of " +
                                  std::to_string(blob.size()) +
                                  " bytes exceeds the superblock's limit"));
    }
    uint64_t segment = 0;
    status = ReserveLocked(&segment, Purpose::kMetadata);
    if (!status.ok()) {
      return give_up(status);
    }
    blob_segments.push_back(segment);
  }
  io::AlignedBuffer buffer(kSegmentBytes);
  for (size_t i = 0; i < blob_segments.size(); ++i) {
    const size_t start = i * kSegmentBytes;
    const size_t length = std::min<size_t>(kSegmentBytes, blob.size() - start);
    std::memset(buffer.data(), 0, buffer.size());
    std::memcpy(buffer.data(), blob.data() + start, length);
    const size_t rounded = io::AlignedBuffer::RoundUp(length);
    status = file_->Write(SegmentStart(blob_segments[i]), buffer.view(rounded));
    if (!status.ok()) {
      return give_up(status);
    }
  }
  std::unique_ptr<RedoLogWriter> redo = MakeRedoWriter(generation);
  status = redo->StartChain(redo_first, next_sequence);
  if (!status.ok()) {
    return give_up(status);
  }
  status = file_->Sync();
  if (!status.ok()) {
    return Fail(Status::IoError(status.message()));  // never NoSpace
  }
  Superblock next = superblock_;
  next.format_version = kSuperblockFormatVersion;
  next.sequence = superblock_.sequence + 1;
  next.generation = generation;
  next.checkpoint_bytes = blob.size();
  next.checkpoint_crc = crc32c::Mask(crc32c::Value(blob.data(), blob.size()));
  next.checkpoint_segments = blob_segments;
  next.redo_first_segment = redo_first;
  next.redo_first_sequence = next_sequence;
  if (status.ok()) {
    io::AlignedBuffer block(kSuperblockBytes);
    const std::string encoded = next.Encode();
    std::memcpy(block.data(), encoded.data(), encoded.size());
    status = file_->Write(kSuperblockOffsets[next.sequence % 2], block.view());
  }
  if (status.ok()) {
    status = file_->Sync();
  }
  if (!status.ok()) {
    return Fail(status);
  }
  // Published: the previous checkpoint and chain are free for reuse.
  for (uint64_t segment : superblock_.checkpoint_segments) {
    allocated_.Erase(segment);
    in_use_.Erase(segment);
  }
  for (uint64_t segment : redo_segments_) {
    allocated_.Erase(segment);
    in_use_.Erase(segment);
  }
  allocated_.Insert(redo_first);
  for (uint64_t segment : blob_segments) {
    allocated_.Insert(segment);
  }
  superblock_ = next;
  redo_segments_ = {redo_first};
  redo_ = std::move(redo);
  ++checkpoints_;
  return Status::Ok();
}

std::optional<std::string> Volume::CatalogGet(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = catalog_.find(key);
  if (it == catalog_.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::vector<std::pair<std::string, std::string>> Volume::CatalogScan(
    std::string_view prefix) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, std::string>> entries;
  for (auto it = catalog_.lower_bound(prefix);
       it != catalog_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    entries.emplace_back(it->first, it->second);
  }
  return entries;
}

bool Volume::IsAllocated(uint64_t segment) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_.Contains(segment);
}

uint64_t Volume::References(uint64_t segment) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!allocated_.Contains(segment)) return 0;
  const auto shared = shares_.find(segment);
  return 1 + (shared == shares_.end() ? 0 : shared->second);
}

uint32_t Volume::format_version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return superblock_.format_version;
}

VolumeStats Volume::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {in_use_.capacity(),
          allocated_.count(),
          in_use_.count() - allocated_.count(),
          checkpoints_,
          redo_ ? redo_->bytes_written() : 0,
          shares_.size()};
}

Status Volume::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_;
}

Status Volume::Fail(Status status) {
  if (failed_.ok()) {
    failed_ = Status::FromCode(
        status.code(), "volume stopped after a metadata write failed: " +
                           std::string(status.message()));
  }
  return failed_;
}

}  // namespace kvs::alloc
