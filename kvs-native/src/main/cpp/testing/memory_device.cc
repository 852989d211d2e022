#include "testing/memory_device.h"

#include <algorithm>
#include <iterator>

#include "io/device_reads.h"
#include "util/limits.h"

namespace kvs::testing {

class MemoryFile final : public io::File {
 public:
  MemoryFile(std::shared_ptr<MemoryDevice> device, uint64_t incarnation)
      : device_(std::move(device)), incarnation_(incarnation) {}

  Status Read(uint64_t offset, size_t size, char* out) override {
    if (io::RefuseDeviceRead()) {  // as a device file does
      return Status::Busy("device read refused");
    }
    std::lock_guard<std::mutex> lock(device_->mutex_);
    if (device_->incarnation_ != incarnation_) {
      return Status::IoError("memory device crashed: handle is dead");
    }
    // Overflow-safe: a damaged pointer can make offset + size wrap.
    if (offset > device_->current_.size() ||
        size > device_->current_.size() - offset) {
      return Status::IoError("read past end of memory device");
    }
    device_->current_.Read(offset, size, out);
    return Status::Ok();
  }

  Status Write(uint64_t offset, std::string_view data) override {
    std::lock_guard<std::mutex> lock(device_->mutex_);
    if (device_->incarnation_ != incarnation_) {
      return Status::IoError("memory device crashed: handle is dead");
    }
    auto& d = *device_;
    if (d.fail_writes_after_bytes_ &&
        d.written_bytes_ + data.size() > *d.fail_writes_after_bytes_) {
      return Status::IoError("injected write error: Input/output error");
    }
    if (d.refuse_writes_no_space_) {
      return Status::NoSpace("injected write error: No space left on device");
    }
    if (offset > d.current_.size() ||
        data.size() > d.current_.size() - offset) {
      return Status::IoError("write past end of memory device");
    }
    d.current_.Write(offset, data);
    d.unsynced_.push_back({offset, std::string(data)});
    d.written_bytes_ += data.size();
    ++d.writes_;
    ++d.writes_by_thread_[std::this_thread::get_id()];
    return Status::Ok();
  }

  Status Sync() override {
    std::lock_guard<std::mutex> lock(device_->mutex_);
    if (device_->incarnation_ != incarnation_) {
      return Status::IoError("memory device crashed: handle is dead");
    }
    auto& d = *device_;
    if (d.fail_next_sync_) {
      d.fail_next_sync_ = false;
      return Status::IoError("injected fdatasync error: Input/output error");
    }
    for (const auto& write : d.unsynced_) {
      d.durable_.Write(write.offset, write.data);
    }
    d.unsynced_.clear();
    ++d.syncs_;
    return Status::Ok();
  }

  Status Grow(uint64_t size_bytes) override {
    std::lock_guard<std::mutex> lock(device_->mutex_);
    if (device_->incarnation_ != incarnation_) {
      return Status::IoError("memory device crashed: handle is dead");
    }
    auto& d = *device_;
    if (size_bytes <= d.current_.size()) {
      return Status::Ok();
    }
    if (size_bytes > d.capacity_bytes_) {
      return Status::NoSpace("fallocate memory device to " +
                             std::to_string(size_bytes) +
                             " bytes: No space left on device");
    }
    // Growth is metadata the file system makes durable at once (fallocate
    // then fsync in the real file), so both states grow.
    d.current_.Resize(size_bytes);
    d.durable_.Resize(size_bytes);
    return Status::Ok();
  }

  uint64_t Size() const override {
    std::lock_guard<std::mutex> lock(device_->mutex_);
    return device_->current_.size();
  }

  bool direct_io() const override { return true; }

 private:
  std::shared_ptr<MemoryDevice> device_;
  const uint64_t incarnation_;
};

std::shared_ptr<MemoryDevice> MemoryDevice::Create(uint64_t capacity_bytes) {
  return std::shared_ptr<MemoryDevice>(new MemoryDevice(capacity_bytes));
}

std::unique_ptr<io::File> MemoryDevice::Open() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::make_unique<MemoryFile>(shared_from_this(), incarnation_);
}

void MemoryDevice::Crash(CrashMode mode, uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  Pages survived = mode == CrashMode::kProcessKill ? current_ : durable_;
  if (mode == CrashMode::kTearUnsynced) {
    std::mt19937_64 random(seed);
    constexpr size_t block = limits::io_alignment_bytes;
    for (const auto& write : unsynced_) {
      for (size_t start = 0; start < write.data.size(); start += block) {
        if (random() % 2 == 0) {
          const size_t length = std::min(block, write.data.size() - start);
          survived.Write(write.offset + start,
                         std::string_view(write.data).substr(start, length));
        }
      }
    }
  }
  unsynced_.clear();
  current_ = survived;
  durable_ = survived;
  ++incarnation_;
}

void MemoryDevice::FailWritesAfter(std::optional<uint64_t> bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_writes_after_bytes_ = bytes;
  written_bytes_ = 0;
}

void MemoryDevice::SetCapacity(uint64_t capacity_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_bytes_ = capacity_bytes;
}

void MemoryDevice::RefuseWritesForNoSpace(bool refuse) {
  std::lock_guard<std::mutex> lock(mutex_);
  refuse_writes_no_space_ = refuse;
}

uint64_t MemoryDevice::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_.size();
}

uint64_t MemoryDevice::written_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return written_bytes_;
}

void MemoryDevice::FailNextSync() {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_next_sync_ = true;
}

void MemoryDevice::FlipBit(uint64_t offset, unsigned bit) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Pages* pages : {&current_, &durable_}) {
    char* byte = pages->At(offset);
    *byte = static_cast<char>(*byte ^ (1u << bit));
  }
}

std::string MemoryDevice::ReadDurable(uint64_t offset, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  size = static_cast<size_t>(std::min<uint64_t>(
      size, durable_.size() - std::min(offset, durable_.size())));
  std::string bytes(size, '\0');
  durable_.Read(offset, size, bytes.data());
  return bytes;
}

uint64_t MemoryDevice::writes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writes_;
}

uint64_t MemoryDevice::writes_from(std::thread::id thread) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = writes_by_thread_.find(thread);
  return it == writes_by_thread_.end() ? 0 : it->second;
}

uint64_t MemoryDevice::syncs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return syncs_;
}

void MemoryDevice::Pages::Resize(uint64_t size) {
  if (size < size_) {
    for (auto it = pages_.begin(); it != pages_.end();) {
      it = it->first * kPageBytes >= size ? pages_.erase(it) : std::next(it);
    }
    if (size % kPageBytes != 0) {  // the cut page's tail reads as zeros
      const auto last = pages_.find(size / kPageBytes);
      if (last != pages_.end()) {
        std::fill(last->second.begin() + size % kPageBytes, last->second.end(),
                  '\0');
      }
    }
  }
  size_ = size;
}

void MemoryDevice::Pages::Read(uint64_t offset, size_t size, char* out) const {
  while (size > 0) {
    const uint64_t in_page = offset % kPageBytes;
    const size_t length =
        static_cast<size_t>(std::min<uint64_t>(size, kPageBytes - in_page));
    const auto page = pages_.find(offset / kPageBytes);
    if (page == pages_.end()) {
      std::fill(out, out + length, '\0');
    } else {
      std::copy_n(page->second.data() + in_page, length, out);
    }
    offset += length;
    out += length;
    size -= length;
  }
}

void MemoryDevice::Pages::Write(uint64_t offset, std::string_view data) {
  while (!data.empty()) {
    const uint64_t in_page = offset % kPageBytes;
    const size_t length = static_cast<size_t>(
        std::min<uint64_t>(data.size(), kPageBytes - in_page));
    std::copy_n(data.data(), length, At(offset));
    offset += length;
    data.remove_prefix(length);
  }
}

char* MemoryDevice::Pages::At(uint64_t offset) {
  std::string& page = pages_[offset / kPageBytes];
  if (page.empty()) page.assign(kPageBytes, '\0');
  return page.data() + offset % kPageBytes;
}

}  // namespace kvs::testing
