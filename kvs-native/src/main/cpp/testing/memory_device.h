// Test helper: an in-memory device that models what a crash does to
// storage, and can be told to fail.
//
// Writes land in volatile state; Sync makes them durable. Crash() throws away
// what was not synced -- all of it, or (torn) a random subset of its 4 KiB
// blocks, as a power cut may do -- after which new File handles see only the
// surviving bytes. Failure knobs inject an I/O error or a full device.
//
// The bytes are kept sparsely, in pages written at least once (the rest
// read as zeros, as a file's holes do): a test may give a region a
// thousand 2 MiB segments and write a few KiB into each.
//
// Thread safety: all methods lock one mutex; a File and the device may be
// used from several threads.

#ifndef KVS_TESTING_MEMORY_DEVICE_H_
#define KVS_TESTING_MEMORY_DEVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "io/file.h"

namespace kvs::testing {

class MemoryDevice : public std::enable_shared_from_this<MemoryDevice> {
 public:
  // `capacity_bytes` bounds Grow (beyond it: "No space left on device").
  static std::shared_ptr<MemoryDevice> Create(uint64_t capacity_bytes);

  // A new handle on the device, as after reopening the file.
  std::unique_ptr<io::File> Open();

  // kDropUnsynced and kTearUnsynced model a power cut, kProcessKill a
  // kill -9: the kernel keeps every completed write, synced or not.
  enum class CrashMode { kDropUnsynced, kTearUnsynced, kProcessKill };
  // Loses unsynced writes (kTearUnsynced keeps a random subset of their
  // blocks, with `seed`; kProcessKill keeps them all). Handles opened before
  // the crash are dead, as the crashed process's file descriptors would be:
  // every call on them fails with IoError. Open() gives working handles on
  // the surviving state.
  void Crash(CrashMode mode, uint64_t seed = 0);

  // From now on, the write that would take total written bytes past
  // `bytes` fails with IoError (EIO); nullopt disarms.
  void FailWritesAfter(std::optional<uint64_t> bytes);
  // Sets how far Grow may take the device (beyond: NoSpace, as fallocate
  // on a full file system); raising it models space freed elsewhere.
  void SetCapacity(uint64_t capacity_bytes);
  // While set, every Write fails with NoSpace and writes nothing (as on a
  // thin-provisioned or copy-on-write device that is full).
  void RefuseWritesForNoSpace(bool refuse);
  // Bytes the device holds (what Grow reached).
  uint64_t size() const;
  // Bytes written so far (what FailWritesAfter counts).
  uint64_t written_bytes() const;
  // The next Sync fails with IoError.
  void FailNextSync();
  // Flips one bit of the durable and current state (corruption tests).
  void FlipBit(uint64_t offset, unsigned bit);
  // Durable bytes [offset, offset + size) (for inspection).
  std::string ReadDurable(uint64_t offset, size_t size);

  uint64_t writes() const;
  // Writes made by thread `thread` (a test's "this thread never wrote").
  uint64_t writes_from(std::thread::id thread) const;
  uint64_t syncs() const;

 private:
  friend class MemoryFile;
  // Bytes [0, size) of which only the pages ever written are held.
  class Pages {
   public:
    uint64_t size() const { return size_; }
    void Resize(uint64_t size);  // growth reads as zeros
    void Read(uint64_t offset, size_t size, char* out) const;
    void Write(uint64_t offset, std::string_view data);
    char* At(uint64_t offset);  // the byte's page made present

   private:
    static constexpr uint64_t kPageBytes = 64 << 10;
    uint64_t size_ = 0;
    std::unordered_map<uint64_t, std::string> pages_;  // by page number
  };
  struct PendingWrite {
    uint64_t offset;
    std::string data;
  };
  explicit MemoryDevice(uint64_t capacity_bytes)
      : capacity_bytes_(capacity_bytes) {}

  mutable std::mutex mutex_;
  uint64_t capacity_bytes_;
  bool refuse_writes_no_space_ = false;
  Pages current_;
  Pages durable_;
  std::vector<PendingWrite> unsynced_;
  std::optional<uint64_t> fail_writes_after_bytes_;
  uint64_t written_bytes_ = 0;
  bool fail_next_sync_ = false;
  uint64_t writes_ = 0;
  std::map<std::thread::id, uint64_t> writes_by_thread_;
  uint64_t syncs_ = 0;
  uint64_t incarnation_ = 0;  // +1 per crash
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_MEMORY_DEVICE_H_
