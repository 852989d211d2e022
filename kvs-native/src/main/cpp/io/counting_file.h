// CountingFile: a File that forwards to another and counts the bytes read
// and written through it, so that one activity (a compaction, a GC pass)
// can report its own device traffic.
//
// Thread safety: as the target; the counters are atomic.

#ifndef KVS_IO_COUNTING_FILE_H_
#define KVS_IO_COUNTING_FILE_H_

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

#include "io/file.h"

namespace kvs::io {

class CountingFile final : public File {
 public:
  explicit CountingFile(File* target) : target_(target) {}

  Status Read(uint64_t offset, size_t size, char* out) override {
    bytes_read_.fetch_add(size, std::memory_order_relaxed);
    return target_->Read(offset, size, out);
  }
  Status ReadMany(std::span<ReadOp> ops) override {
    for (const ReadOp& op : ops) {
      bytes_read_.fetch_add(op.size, std::memory_order_relaxed);
    }
    return target_->ReadMany(ops);
  }
  Status Write(uint64_t offset, std::string_view data) override {
    bytes_written_.fetch_add(data.size(), std::memory_order_relaxed);
    return target_->Write(offset, data);
  }
  Status Sync() override { return target_->Sync(); }
  Status Grow(uint64_t size_bytes) override {
    return target_->Grow(size_bytes);
  }
  uint64_t Size() const override { return target_->Size(); }
  bool direct_io() const override { return target_->direct_io(); }
  uint64_t read_alignment_bytes() const override {
    return target_->read_alignment_bytes();
  }

  uint64_t bytes_read() const {
    return bytes_read_.load(std::memory_order_relaxed);
  }
  uint64_t bytes_written() const {
    return bytes_written_.load(std::memory_order_relaxed);
  }

 private:
  File* const target_;
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> bytes_written_{0};
};

}  // namespace kvs::io

#endif  // KVS_IO_COUNTING_FILE_H_
