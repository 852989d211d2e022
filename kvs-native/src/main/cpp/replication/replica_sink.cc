#include "replication/replica_sink.h"

#include <cstring>
#include <string>

#include "util/thread_cpu.h"

namespace kvs::replication {

ReplicaSink::ReplicaSink(lsm::Region* region, uint64_t region_id)
    : region_(region), region_id_(region_id) {}

Status ReplicaSink::Create(channel::Session* session, lsm::Region* region,
                           uint64_t region_id,
                           std::unique_ptr<ReplicaSink>* sink) {
  std::unique_ptr<ReplicaSink> created(new ReplicaSink(region, region_id));
  std::vector<std::shared_ptr<channel::ReplicaBuffer>> buffers;
  KVS_RETURN_IF_ERROR(
      session->ReplicaBuffers(region_id, kBuffers, kBufferBytes, &buffers));
  for (size_t i = 0; i < kBuffers; ++i) {
    created->buffers_[i] = std::move(buffers[i]);
  }
  *sink = std::move(created);
  return Status::Ok();
}

ReplicaSink::~ReplicaSink() {
  std::lock_guard<std::mutex> lock(mutex_);
  // The buffer being filled holds the older records; the other one, once
  // the primary sent that buffer's FLUSH (not taken here yet) and moved on,
  // the newer: writes the primary acknowledged once they landed, before
  // the FLUSH was answered. Both, in that order (a buffer is written again
  // only after its FLUSH was answered and applied, which zeroes it, so the
  // other one holds nothing older).
  for (size_t i = 0; i < kBuffers; ++i) {
    const size_t buffer = (filling_ + i) % kBuffers;
    const std::string_view valid = ValidLocked(buffer);
    if (valid.empty()) continue;
    const Status applied = ApplyLocked(buffer, valid);
    (void)applied;  // best effort: the region reports its own errors
  }
}

std::string_view ReplicaSink::ValidLocked(size_t buffer) const {
  const channel::ReplicaBuffer* held = buffers_[buffer].get();
  if (held == nullptr) return {};
  const std::string_view bytes(held->data(), held->size());
  return bytes.substr(0, ValidPrefix(bytes));
}

std::string ReplicaSink::Pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string pending;
  for (size_t i = 0; i < kBuffers; ++i) {
    pending.append(ValidLocked((filling_ + i) % kBuffers));
  }
  return pending;
}

std::vector<fabric::RemoteBuffer> ReplicaSink::buffers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<fabric::RemoteBuffer> remotes;
  for (const auto& buffer : buffers_) remotes.push_back(buffer->remote());
  return remotes;
}

Status ReplicaSink::Flush(const Control& control) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (control.sequence != next_sequence_ || control.buffer != filling_) {
    return Status::InvalidArgument(
        "region " + std::to_string(region_id_) + ": FLUSH " +
        std::to_string(control.sequence) + " of buffer " +
        std::to_string(control.buffer) + " out of order (expected " +
        std::to_string(next_sequence_) + " of buffer " +
        std::to_string(filling_) + ")");
  }
  const std::string_view bytes(buffers_[filling_]->data(), control.bytes);
  const uint64_t start = ThreadCpuNanos();
  const Status applied = ApplyLocked(filling_, bytes);
  stats_.apply_cpu_ns += ThreadCpuNanos() - start;
  KVS_RETURN_IF_ERROR(applied);
  ++next_sequence_;
  filling_ = (filling_ + 1) % kBuffers;
  ++stats_.flushes;
  return Status::Ok();
}

Status ReplicaSink::ApplyLocked(size_t buffer, std::string_view bytes) {
  std::vector<Record> records;
  KVS_RETURN_IF_ERROR(DecodeRecords(bytes, &records));
  std::vector<lsm::Region::BatchWrite> batch;
  for (const Record& record : records) {
    if (record.continues_batch || !batch.empty()) {
      // An atomic batch: applied as one once its last record is here.
      batch.push_back(
          {record.type == RecordType::kPut, record.key, record.value});
      if (record.continues_batch) continue;
      KVS_RETURN_IF_ERROR(region_->WriteBatch(batch));
      batch.clear();
      continue;
    }
    KVS_RETURN_IF_ERROR(
        record.type == RecordType::kPut
            ? region_->Put(record.key, record.value, record.write_id)
            : region_->Delete(record.key, record.write_id));
  }
  if (!batch.empty()) {
    return Status::Corruption(
        "region " + std::to_string(region_id_) +
        ": replicated records end inside an atomic batch (" +
        std::to_string(batch.size()) + " of its records)");
  }
  KVS_RETURN_IF_ERROR(region_->Sync());
  stats_.records_applied += records.size();
  stats_.bytes_applied += bytes.size();
  buffers_[buffer]->Zero(0, bytes.size());
  return Status::Ok();
}

SinkStats ReplicaSink::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kvs::replication
