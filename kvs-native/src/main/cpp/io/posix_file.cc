#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "io/aligned_buffer.h"
#include "io/device_reads.h"
#include "io/file.h"
#include "io/uring_reads.h"
#include "util/check.h"
#include "util/limits.h"

namespace kvs::io {
namespace {

// A logical block size from sysfs, 0 if unreadable.
uint64_t SysfsBlockSize(const char* path) {
  FILE* file = std::fopen(path, "r");
  if (file == nullptr) return 0;
  unsigned long long bytes = 0;
  const bool read = std::fscanf(file, "%llu", &bytes) == 1;
  std::fclose(file);
  return read ? bytes : 0;
}

// The read granularity of a direct-I/O file (File::read_alignment_bytes):
// the logical block size of its device -- a block device's own, or that of
// the device (or the partition's disk) a regular file lives on -- clamped
// to [512, io_alignment_bytes]; io_alignment_bytes when unknown.
uint64_t ReadAlignment(int fd, const struct stat& info, bool direct) {
  constexpr uint64_t kSmallest = 512;
  if (!direct) return kSmallest;
  uint64_t bytes = 0;
  if (S_ISBLK(info.st_mode)) {
    int logical = 0;
    if (::ioctl(fd, BLKSSZGET, &logical) == 0 && logical > 0) {
      bytes = static_cast<uint64_t>(logical);
    }
  } else {
    char path[96];
    std::snprintf(path, sizeof path,
                  "/sys/dev/block/%u:%u/queue/logical_block_size",
                  major(info.st_dev), minor(info.st_dev));
    bytes = SysfsBlockSize(path);
    if (bytes == 0) {  // a partition: its disk has the queue
      std::snprintf(path, sizeof path,
                    "/sys/dev/block/%u:%u/../queue/logical_block_size",
                    major(info.st_dev), minor(info.st_dev));
      bytes = SysfsBlockSize(path);
    }
  }
  const bool usable = bytes >= kSmallest &&
                      bytes <= limits::io_alignment_bytes &&
                      (bytes & (bytes - 1)) == 0;
  return usable ? bytes : limits::io_alignment_bytes;
}

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::string path, bool direct, bool block_device,
            uint64_t size, uint64_t read_alignment)
      : fd_(fd),
        path_(std::move(path)),
        direct_(direct),
        block_device_(block_device),
        size_(size),
        read_alignment_(read_alignment) {}

  ~PosixFile() override { ::close(fd_); }

  uint64_t read_alignment_bytes() const override {
    return read_alignment_.load(std::memory_order_relaxed);
  }

  Status Read(uint64_t offset, size_t size, char* out) override {
    CheckReadAlignment(offset, size, out);
    if (RefuseDeviceRead()) return Refused(offset, size);
    int error = 0;
    const Status status = ReadAll(offset, size, out, &error);
    if (error == EINVAL && direct_ &&
        ((offset | size) & (limits::io_alignment_bytes - 1)) != 0) {
      // The file system wants more than the device's block size (an
      // encrypted or compressed file, say): reads of whole pages from now
      // on, and this one through a page-aligned bounce buffer.
      read_alignment_.store(limits::io_alignment_bytes,
                            std::memory_order_relaxed);
      return ReadThroughPages(offset, size, out);
    }
    return status;
  }

  Status ReadMany(std::span<ReadOp> ops) override {
    for (const ReadOp& op : ops) {
      CheckReadAlignment(op.offset, op.size, op.out);
    }
    if (!ops.empty() && RefuseDeviceRead()) {
      for (ReadOp& op : ops) op.status = Refused(op.offset, op.size);
      return ops.front().status;
    }
    std::vector<size_t> retry;
    if (ops.size() < 2 || !UringReadMany(fd_, ops, &retry)) {
      return File::ReadMany(ops);
    }
    for (const size_t index : retry) {
      ops[index].status =
          Read(ops[index].offset, ops[index].size, ops[index].out);
    }
    for (const ReadOp& op : ops) {
      if (!op.status.ok()) {
        return op.status;
      }
    }
    return Status::Ok();
  }

  Status Write(uint64_t offset, std::string_view data) override {
    CheckAlignment(offset, data.size(), data.data());
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done,
                                 static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::FromErrno(Where("write", offset, data.size()), errno);
      }
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  Status Sync() override {
    if (::fdatasync(fd_) != 0) {
      return Status::FromErrno("fdatasync " + path_, errno);
    }
    return Status::Ok();
  }

  Status Grow(uint64_t size_bytes) override {
    std::lock_guard<std::mutex> lock(grow_mutex_);
    const uint64_t current = size_.load(std::memory_order_acquire);
    if (size_bytes <= current) {
      return Status::Ok();
    }
    if (block_device_) {
      return Status::NoSpace("block device " + path_ + " holds " +
                             std::to_string(current) + " bytes; " +
                             std::to_string(size_bytes) + " needed");
    }
    const int result = ::fallocate(fd_, 0, static_cast<off_t>(current),
                                   static_cast<off_t>(size_bytes - current));
    if (result != 0) {
      return Status::FromErrno(
          "fallocate " + path_ + " to " + std::to_string(size_bytes) + " bytes",
          errno);
    }
    size_.store(size_bytes, std::memory_order_release);
    return Status::Ok();
  }

  uint64_t Size() const override {
    return size_.load(std::memory_order_acquire);
  }

  bool direct_io() const override { return direct_; }

 private:
  // `*error`: the errno of a failed read.
  Status ReadAll(uint64_t offset, size_t size, char* out, int* error) {
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pread(fd_, out + done, size - done,
                                static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        *error = errno;
        return Status::FromErrno(Where("read", offset, size), errno);
      }
      if (n == 0) {
        return Status::IoError(Where("read past end of file", offset, size));
      }
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  Status ReadThroughPages(uint64_t offset, size_t size, char* out) {
    const uint64_t from = offset & ~(limits::io_alignment_bytes - 1);
    const uint64_t to = AlignedBuffer::RoundUp(offset + size);
    AlignedBuffer pages(to - from);
    int error = 0;
    KVS_RETURN_IF_ERROR(ReadAll(from, to - from, pages.data(), &error));
    std::memcpy(out, pages.data() + (offset - from), size);
    return Status::Ok();
  }

  void CheckReadAlignment(uint64_t offset, size_t size,
                          const char* buffer) const {
    if (direct_) {
      const uint64_t mask = read_alignment_bytes() - 1;
      KVS_CHECK_MSG((offset & mask) == 0 && (size & mask) == 0 &&
                        (reinterpret_cast<uintptr_t>(buffer) &
                         (limits::io_alignment_bytes - 1)) == 0,
                    "unaligned direct read");
    }
  }

  void CheckAlignment(uint64_t offset, size_t size, const char* buffer) const {
    if (direct_) {
      constexpr uint64_t mask = limits::io_alignment_bytes - 1;
      KVS_CHECK_MSG((offset & mask) == 0 && (size & mask) == 0 &&
                        (reinterpret_cast<uintptr_t>(buffer) & mask) == 0,
                    "unaligned direct I/O");
    }
  }

  Status Refused(uint64_t offset, size_t size) const {
    return Status::Busy(
        Where("device read refused on a thread that must not "
              "wait for the device:",
              offset, size));
  }

  std::string Where(const char* what, uint64_t offset, size_t size) const {
    return std::string(what) + " " + path_ + " at " + std::to_string(offset) +
           " (" + std::to_string(size) + " bytes)";
  }

  const int fd_;
  const std::string path_;
  const bool direct_;
  const bool block_device_;
  std::atomic<uint64_t> size_;
  // Drops to io_alignment_bytes for good once the file system refuses a
  // read at the device's block size.
  std::atomic<uint64_t> read_alignment_;
  std::mutex grow_mutex_;
};

}  // namespace

Status OpenPosixFile(const std::string& path, const FileOptions& options,
                     std::unique_ptr<File>* file) {
  int flags = O_RDWR | O_CLOEXEC;
  if (options.create) {
    flags |= O_CREAT;
  }
  bool direct = options.direct_io;
  int fd = ::open(path.c_str(), flags | (direct ? O_DIRECT : 0), 0644);
  if (fd < 0 && direct && errno == EINVAL) {
    // tmpfs and a few others refuse O_DIRECT; buffered I/O stays correct
    // because every durability point calls Sync.
    direct = false;
    fd = ::open(path.c_str(), flags, 0644);
  }
  if (fd < 0) {
    return Status::FromErrno("open " + path, errno);
  }
  if (options.lock && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Status::Busy(path +
                          " is in use: another engine (in this process or "
                          "another) has it open");
    }
    return Status::FromErrno("lock " + path, error);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return Status::FromErrno("stat " + path, error);
  }
  const bool block_device = S_ISBLK(info.st_mode);
  uint64_t size = static_cast<uint64_t>(info.st_size);
  if (block_device) {
    if (::ioctl(fd, BLKGETSIZE64, &size) != 0) {
      const int error = errno;
      ::close(fd);
      return Status::FromErrno("size of block device " + path, error);
    }
  } else if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path +
                                   " is neither a file nor a block device");
  }
  *file = std::make_unique<PosixFile>(fd, path, direct, block_device, size,
                                      ReadAlignment(fd, info, direct));
  return Status::Ok();
}

}  // namespace kvs::io
