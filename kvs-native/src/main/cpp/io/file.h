// Positional I/O on a volume: a regular file or a block device.
//
// The engine reads and writes its volume only through this interface, so
// tests can wrap it (see testing/fault_injection_file.h) to inject I/O errors,
// a full device, or a crash that loses unsynced writes.
//
// Thread safety: Read, Write and Sync may be called concurrently on
// non-overlapping ranges; Grow must not race with itself.

#ifndef KVS_IO_FILE_H_
#define KVS_IO_FILE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "util/limits.h"
#include "util/status.h"

namespace kvs::io {

// One read of a batch (File::ReadMany).
struct ReadOp {
  uint64_t offset = 0;
  size_t size = 0;
  char* out = nullptr;
  Status status;  // set by ReadMany
};

class File {
 public:
  virtual ~File() = default;

  // Reads exactly `size` bytes at `offset` into `out`. A read past the end
  // of the file is an IoError. With direct I/O, offset and size must be
  // aligned to read_alignment_bytes() and `out` to
  // limits::io_alignment_bytes.
  virtual Status Read(uint64_t offset, size_t size, char* out) = 0;

  // Performs every read of `ops` (alignment as for Read), each reporting
  // its own status, and returns the first failure (or OK). A file may keep
  // the reads in flight together: a batch of independent reads costs about
  // one device latency instead of one per read. This default reads them one
  // after another.
  virtual Status ReadMany(std::span<ReadOp> ops);

  // Writes all of `data` at `offset`; with direct I/O, offset, size and
  // data aligned to limits::io_alignment_bytes. The write is durable only
  // after a later Sync returns OK.
  virtual Status Write(uint64_t offset, std::string_view data) = 0;

  // Makes every completed Write durable (fdatasync).
  virtual Status Sync() = 0;

  // Makes the file at least `size_bytes` long with the space reserved
  // (fallocate), so later writes cannot fail for lack of space. A block
  // device cannot grow: asking beyond its size is an IoError.
  virtual Status Grow(uint64_t size_bytes) = 0;

  // Current size in bytes.
  virtual uint64_t Size() const = 0;

  // Whether Read/Write bypass the page cache (and so need alignment).
  virtual bool direct_io() const = 0;

  // The granularity of a read's offset and size (a power of two from 512
  // to limits::io_alignment_bytes): the device's logical block size where
  // reads that small are allowed (512 B on many SSDs), so that a reader of
  // a small record (a value behind a log pointer) reads only the blocks
  // that hold it, not a whole 4 KiB page -- what a scan of separated
  // values reads is mostly such records. Writes keep
  // limits::io_alignment_bytes.
  virtual uint64_t read_alignment_bytes() const {
    return limits::io_alignment_bytes;
  }
};

struct FileOptions {
  // Open with O_DIRECT. Falls back to buffered I/O (with a note in the
  // status of Open) only when the file system refuses O_DIRECT (tmpfs).
  bool direct_io = true;
  // Create the file if it does not exist (never for block devices).
  bool create = false;
  // Take an exclusive lock (flock) held while the file is open: a second
  // open with `lock`, from this process or another, fails with BUSY
  // instead of two writers corrupting one volume.
  bool lock = true;
};

// Opens `path`. For a block device, Size() is the device size.
Status OpenPosixFile(const std::string& path, const FileOptions& options,
                     std::unique_ptr<File>* file);

}  // namespace kvs::io

#endif  // KVS_IO_FILE_H_
