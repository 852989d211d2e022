#include "lsm/compaction.h"

#include <cstring>
#include <random>

#include "alloc/device_offset.h"
#include "btree/bloom_filter.h"
#include "btree/tree_builder.h"
#include "io/aligned_buffer.h"
#include "io/counting_file.h"
#include "log/log_format.h"
#include "lsm/medium_reader.h"
#include "lsm/segment_source.h"
#include "util/check.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

// Appends medium KV pairs to fresh segments of the transient medium log.
class MediumLogAppender {
 public:
  MediumLogAppender(alloc::Volume* volume, uint64_t region_id,
                    std::function<void(const log::AppendedBytes&)> on_append)
      : volume_(volume),
        region_id_(region_id),
        on_append_(std::move(on_append)) {}

  Status Append(std::string_view key, std::string_view value,
                btree::LeafValue* pointer) {
    const log::Record record{0, log::RecordType::kPut, key, value, {}};
    const size_t size = record.EncodedSize();
    if (!open_ || used_ + size > limits::segment_size_bytes) {
      KVS_RETURN_IF_ERROR(Roll());
    }
    log::EncodeRecord(record, nonce_, buffer_.data() + used_);
    Report(used_, size);
    *pointer = btree::LeafValue::InLog(alloc::DeviceOffset(segment_, used_),
                                       static_cast<uint32_t>(size));
    used_ += size;
    return Status::Ok();
  }

  Status Finish() { return open_ ? WriteCurrent() : Status::Ok(); }
  const std::vector<uint64_t>& segments() const { return segments_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  Status Roll() {
    if (open_) {
      KVS_RETURN_IF_ERROR(WriteCurrent());
    }
    KVS_RETURN_IF_ERROR(volume_->Reserve(&segment_));
    segments_.push_back(segment_);
    if (buffer_.size() == 0) {
      buffer_.Resize(limits::segment_size_bytes);
    }
    std::memset(buffer_.data(), 0, buffer_.size());
    nonce_ = std::random_device{}() * 0x100000001ull ^ segment_;
    log::EncodeSegmentHeader(
        {region_id_, log::LogKind::kMedium, segments_.size() - 1, nonce_},
        buffer_.data());
    used_ = log::kSegmentHeaderBytes;
    open_ = true;
    Report(0, log::kSegmentHeaderBytes);
    return Status::Ok();
  }

  void Report(size_t offset, size_t size) const {
    if (on_append_) {
      on_append_({segments_.size() - 1, segment_, offset,
                  std::string_view(buffer_.data() + offset, size)});
    }
  }

  Status WriteCurrent() {
    const size_t length = io::AlignedBuffer::RoundUp(used_);
    bytes_written_ += length;
    return volume_->file()->Write(alloc::SegmentStart(segment_),
                                  buffer_.view(length));
  }

  alloc::Volume* const volume_;
  const uint64_t region_id_;
  const std::function<void(const log::AppendedBytes&)> on_append_;
  io::AlignedBuffer buffer_;
  std::vector<uint64_t> segments_;
  uint64_t segment_ = 0;
  uint64_t nonce_ = 0;
  size_t used_ = 0;
  bool open_ = false;
  uint64_t bytes_written_ = 0;
};

// One sorted input stream, newest version per key, with L0 payloads
// translated to leaf values.
class Input {
 public:
  virtual ~Input() = default;
  virtual bool Valid() const = 0;
  virtual std::string_view key() const = 0;
  virtual btree::LeafValue value() const = 0;
  // Moves past the current key; dropped older versions are reported.
  virtual void Next(CompactionResult* result) = 0;
  virtual Status status() const = 0;
};

void CountGarbage(const btree::LeafValue& value, const Level* medium_owner,
                  CompactionResult* result) {
  if (value.kind == btree::EntryKind::kPutInLog &&
      (medium_owner == nullptr ||
       !medium_owner->IsMediumSegment(alloc::SegmentOf(value.log_offset)))) {
    result->large_garbage[alloc::SegmentOf(value.log_offset)] +=
        value.log_record_size_bytes;
  }
}

btree::LeafValue FromL0(const L0Table::Entry& entry) {
  switch (entry.kind) {
    case kL0InPlace:
      return btree::LeafValue::Inline(entry.payload);
    case kL0LargePointer: {
      LogPointer pointer;
      KVS_CHECK(DecodeLogPointer(entry.payload, &pointer));
      return btree::LeafValue::InLog(pointer.device_offset,
                                     pointer.record_size);
    }
    default:
      return btree::LeafValue::Tombstone();
  }
}

// The immutable L0s of a job as one sorted input: per key the newest
// version (the first of the newest table holding the key); every other
// version, in that table or an older one, is shadowed.
class L0Input final : public Input {
 public:
  // `tables` newest first.
  explicit L0Input(const std::vector<std::shared_ptr<L0Table>>& tables) {
    for (const auto& table : tables) {
      iterators_.emplace_back(table.get());
      iterators_.back().SeekToFirst();
    }
    Pick();
  }
  bool Valid() const override { return current_ != kNone; }
  std::string_view key() const override {
    return iterators_[current_].entry().key;
  }
  btree::LeafValue value() const override {
    return FromL0(iterators_[current_].entry());
  }
  void Next(CompactionResult* result) override {
    const std::string current(key());
    iterators_[current_].Next();
    for (L0Table::Iterator& iterator : iterators_) {
      while (iterator.Valid() && iterator.entry().key == current) {
        CountGarbage(FromL0(iterator.entry()), nullptr, result);
        iterator.Next();
      }
    }
    Pick();
  }
  Status status() const override { return Status::Ok(); }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  // The smallest key's newest table: on a tie the earlier (newer) wins.
  void Pick() {
    current_ = kNone;
    for (size_t i = 0; i < iterators_.size(); ++i) {
      if (iterators_[i].Valid() &&
          (current_ == kNone ||
           iterators_[i].entry().key < iterators_[current_].entry().key)) {
        current_ = i;
      }
    }
  }

  std::vector<L0Table::Iterator> iterators_;
  size_t current_ = kNone;
};

class LevelInput final : public Input {
 public:
  // Reads the level through its own segment-at-a-time source, not the
  // shared node cache.
  LevelInput(const Level* level, io::File* file)
      : level_(level),
        source_(file),
        tree_(&source_, level->descriptor().root),
        iterator_(&tree_) {
    iterator_.SeekToFirst();
  }
  bool Valid() const override { return iterator_.Valid(); }
  std::string_view key() const override { return iterator_.key(); }
  btree::LeafValue value() const override { return iterator_.value(); }
  void Next(CompactionResult*) override { iterator_.Next(); }
  Status status() const override { return iterator_.status(); }
  const Level* level() const { return level_; }

 private:
  const Level* const level_;
  SegmentSource source_;
  btree::TreeReader tree_;
  btree::TreeReader::Iterator iterator_;
};

// Levels as one sorted input, newest first: per key the version of the
// newest level holding it; the others' are shadowed.
class LevelsInput final : public Input {
 public:
  LevelsInput(const std::vector<std::shared_ptr<Level>>& levels,
              io::File* file) {
    for (const auto& level : levels) {
      inputs_.push_back(std::make_unique<LevelInput>(level.get(), file));
    }
    Pick();
  }
  bool Valid() const override { return current_ != kNone; }
  std::string_view key() const override { return inputs_[current_]->key(); }
  btree::LeafValue value() const override { return inputs_[current_]->value(); }
  void Next(CompactionResult* result) override {
    const std::string current(key());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      LevelInput& input = *inputs_[i];
      if (!input.Valid() || input.key() != current) continue;
      if (i != current_) CountGarbage(input.value(), input.level(), result);
      input.Next(result);
    }
    Pick();
  }
  Status status() const override {
    for (const auto& input : inputs_) {
      if (!input->status().ok()) return input->status();
    }
    return Status::Ok();
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  // The smallest key's newest level: on a tie the earlier (newer) wins.
  void Pick() {
    current_ = kNone;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i]->Valid() &&
          (current_ == kNone || inputs_[i]->key() < inputs_[current_]->key())) {
        current_ = i;
      }
    }
  }

  std::vector<std::unique_ptr<LevelInput>> inputs_;
  size_t current_ = kNone;
};

struct Compactor {
  alloc::Volume* volume;
  MediumReader* medium_values;
  const CompactionJob& job;
  CompactionResult* result;
  btree::TreeBuilder* builder;
  btree::BloomFilterBuilder* bloom;
  MediumLogAppender* medium;
  std::string scratch;

  bool IsMediumPointer(const btree::LeafValue& value) const {
    if (value.kind != btree::EntryKind::kPutInLog) return false;
    const uint64_t segment = alloc::SegmentOf(value.log_offset);
    for (const auto& source : job.source_levels) {
      if (source->IsMediumSegment(segment)) return true;
    }
    return job.target && job.target->IsMediumSegment(segment);
  }

  Status Emit(std::string_view key, btree::LeafValue value, bool from_l0) {
    result->entries_in++;
    if (!job.bounds.Contains(key)) {
      if (value.kind == btree::EntryKind::kPutInLog &&
          !IsMediumPointer(value)) {
        result->large_garbage[alloc::SegmentOf(value.log_offset)] +=
            value.log_record_size_bytes;
      }
      return Status::Ok();
    }
    if (value.kind == btree::EntryKind::kDelete && job.last_level) {
      return Status::Ok();
    }
    if (value.kind == btree::EntryKind::kPutInline && from_l0 &&
        !job.last_level &&
        Categorize(job.placement, key.size(), value.inline_bytes.size()) ==
            KvCategory::kMedium) {
      KVS_RETURN_IF_ERROR(medium->Append(key, value.inline_bytes, &value));
    } else if (job.last_level && IsMediumPointer(value)) {
      KVS_RETURN_IF_ERROR(medium_values->ReadValue(
          value.log_offset, value.log_record_size_bytes, key, &scratch));
      value = btree::LeafValue::Inline(scratch);
    }
    uint64_t kv_bytes = key.size();
    if (value.kind == btree::EntryKind::kPutInline) {
      kv_bytes += value.inline_bytes.size();
    } else if (value.kind == btree::EntryKind::kPutInLog) {
      kv_bytes += value.log_record_size_bytes - log::kRecordHeaderBytes;
    }
    result->output.kv_bytes += kv_bytes;
    result->output.entries++;
    bloom->AddKey(key);
    return builder->Add(key, value);
  }
};

}  // namespace

Status RunCompaction(alloc::Volume* volume, const CompactionJob& job,
                     CompactionResult* result) {
  KVS_CHECK(job.source_l0s.empty() != job.source_levels.empty());
  *result = CompactionResult{};
  SegmentWriter index(volume, job.on_index_segment);
  MediumLogAppender medium(volume, job.region_id, job.on_medium_append);
  btree::TreeBuilder builder(&index);
  btree::BloomFilterBuilder bloom(job.bloom_bits_per_key);
  // Every input read of this compaction, for the statistics.
  io::CountingFile inputs(volume->file());
  MediumReader medium_values(&inputs);
  Compactor compactor{volume,   &medium_values, job,     result,
                      &builder, &bloom,         &medium, {}};

  std::unique_ptr<Input> newer;
  if (!job.source_l0s.empty()) {
    newer = std::make_unique<L0Input>(job.source_l0s);
  } else {
    newer = std::make_unique<LevelsInput>(job.source_levels, &inputs);
  }
  std::unique_ptr<LevelInput> older;
  if (job.target) {
    older = std::make_unique<LevelInput>(job.target.get(), &inputs);
  }
  const bool from_l0 = !job.source_l0s.empty();

  auto fail = [&](Status status) {
    index.Abandon();
    for (uint64_t segment : medium.segments()) volume->Unreserve(segment);
    return status;
  };

  Status status;
  while (status.ok() && (newer->Valid() || (older && older->Valid()))) {
    const bool take_newer = newer->Valid() && (!older || !older->Valid() ||
                                               newer->key() <= older->key());
    if (take_newer) {
      const std::string key(newer->key());
      if (older && older->Valid() && older->key() == key) {
        // The older level's version is shadowed.
        CountGarbage(older->value(), older->level(), result);
        older->Next(result);
      }
      status = compactor.Emit(key, newer->value(), from_l0);
      newer->Next(result);
    } else {
      status = compactor.Emit(older->key(), older->value(), false);
      older->Next(result);
    }
  }
  if (status.ok()) status = newer->status();
  if (status.ok() && older) status = older->status();
  uint64_t root = 0;
  if (status.ok()) status = builder.Finish(&root);
  // The filter goes after the nodes, in the same segments.
  const std::string filter = bloom.Finish();
  if (status.ok() && root != 0) {
    result->output.bloom_bytes = filter.size();
    status = WriteBlob(&index, filter, &result->output.bloom_chunks);
  }
  if (status.ok()) status = index.Finish();
  if (status.ok()) status = medium.Finish();
  if (!status.ok()) {
    return fail(status);
  }
  LevelDescriptor& output = result->output;
  output.root = root;
  output.index_segments = index.segments();
  output.medium_segments = medium.segments();
  std::vector<const Level*> input_levels;
  for (const auto& source : job.source_levels) {
    input_levels.push_back(source.get());
  }
  if (job.target != nullptr) input_levels.push_back(job.target.get());
  if (!job.last_level) {
    for (const Level* input : input_levels) {
      const auto& carried = input->descriptor().medium_segments;
      output.medium_segments.insert(output.medium_segments.end(),
                                    carried.begin(), carried.end());
    }
  }
  result->new_segments = index.segments();
  result->new_segments.insert(result->new_segments.end(),
                              medium.segments().begin(),
                              medium.segments().end());

  for (const Level* input : input_levels) {
    const LevelDescriptor& d = input->descriptor();
    for (uint64_t segment : d.index_segments)
      result->obsolete_segments.push_back(segment);

    if (job.last_level) {
      for (uint64_t segment : d.medium_segments)
        result->obsolete_segments.push_back(segment);
    }
  }
  result->bytes_written = index.bytes_written() + medium.bytes_written();
  result->medium_bytes_written = medium.bytes_written();
  result->bytes_read = inputs.bytes_read();
  return Status::Ok();
}

}  // namespace kvs::lsm
