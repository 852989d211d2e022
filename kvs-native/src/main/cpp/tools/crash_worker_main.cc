// kvs_crash_worker: the child process of the crash test (crash_test.cc),
// which kills it with SIGKILL at a random moment and then checks what the
// engine recovers.
//
// usage: kvs_crash_worker VOLUME JOURNAL sync|flush|default FIRST_SEQ SEED
//
// Opens (creating if missing) the engine at VOLUME with the smallest L0, so
// compactions run often, opens or creates region "crash", and then writes
// forever: puts of self-describing values (crash_format.h) and some deletes
// over kKeyCount keys, operation sequence numbers counting up from
// FIRST_SEQ (the test passes one above everything attempted before, so
// sequence numbers order every operation ever issued on the volume).
//
// Modes:
//   sync     engine option sync=1: every put or delete that returns OK is
//            durable, and is journalled as acknowledged right after.
//   flush    sync=0: writes are acknowledged from memory; every 1..256
//            operations the worker calls kvs_region_sync and, once it
//            returns OK, journals that everything up to the last operation
//            is durable.
//   default  sync=0 and nothing else: only the engine's background flusher
//            (every flush_interval_ms, left at its default of 50 ms) makes
//            writes durable, so nothing is journalled but attempts. This is
//            how most clients run.
//
// Every journal record carries the CLOCK_MONOTONIC time it was written at.
// In flush and default modes an operation is not journalled as acknowledged:
// the next attempt record says so (see crash_format.h), which keeps the
// journal to one write(2) per operation.
//
// The journal (JOURNAL, truncated at start) is written with plain write(2)
// and never fsynced: SIGKILL ends the process, not the kernel, so every
// write(2) that returned is in the page cache and visible to the test.
//
// Uses the C ABI (kvs/kvs.h) only, like any client of the library.
//
// Exit status: the worker is meant to die by SIGKILL. It exits 1 on an
// engine or journal error (message on stderr), 2 when it has not been killed
// within kRunTimeLimit (so a worker orphaned by a crashed test cannot fill
// the disk), 64 on bad usage.

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>

#include "kvs/kvs.h"
#include "tools/crash_format.h"

namespace {

using kvs::crash::JournalRecord;
using kvs::crash::JournalType;

// Far above any test cycle (tens of milliseconds), far below what it takes
// to fill a disk.
constexpr auto kRunTimeLimit = std::chrono::seconds(120);

// One delete in kDeleteOneIn operations.
constexpr uint64_t kDeleteOneIn = 10;

// Flush mode syncs after 1..kSyncIntervalOperationsMax operations, so some
// syncs cover one write and some cover a whole compaction's worth.
constexpr uint64_t kSyncIntervalOperationsMax = 256;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "kvs_crash_worker: %s\n", what.c_str());
  std::exit(1);
}

[[noreturn]] void DieOnStatus(const char* call, kvs_status status) {
  Die(std::string(call) + " failed: " + kvs_status_name(status) + ": " +
      kvs_last_error_message());
}

class Journal {
 public:
  explicit Journal(const char* path)
      : fd_(::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
                   0644)) {
    if (fd_ < 0) {
      Die(std::string("cannot open journal ") + path + ": " +
          std::strerror(errno));
    }
  }

  void Append(JournalType type, uint32_t key, uint64_t seq) {
    char record[kvs::crash::kJournalRecordBytes];
    kvs::crash::EncodeJournalRecord(JournalRecord{type, key, seq, NowMicros()},
                                    record);
    // No signal handlers are installed, so no EINTR; a short write means a
    // full disk, after which the journal cannot be trusted.
    if (::write(fd_, record, sizeof(record)) !=
        static_cast<ssize_t>(sizeof(record))) {
      Die(std::string("journal write failed: ") + std::strerror(errno));
    }
  }

 private:
  // CLOCK_MONOTONIC, which every process reads alike; the test compares
  // the timestamps of one journal with each other only.
  static uint64_t NowMicros() {
    struct timespec now;
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000 +
           static_cast<uint64_t>(now.tv_nsec) / 1000;
  }

  const int fd_;  // closed by the kernel: the worker never exits normally
};

uint64_t ParseUnsigned(const char* text, const char* what) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') {
    std::fprintf(stderr, "kvs_crash_worker: bad %s '%s'\n", what, text);
    std::exit(64);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc == 6 ? argv[3] : "";
  if (mode != "sync" && mode != "flush" && mode != "default") {
    std::fprintf(stderr,
                 "usage: kvs_crash_worker VOLUME JOURNAL sync|flush|default "
                 "FIRST_SEQ SEED\n");
    return 64;
  }
  const char* volume_path = argv[1];
  const bool sync_mode = mode == "sync";
  const bool flush_mode = mode == "flush";
  uint64_t seq = ParseUnsigned(argv[4], "first sequence number");
  std::mt19937_64 random(ParseUnsigned(argv[5], "seed"));
  const auto started = std::chrono::steady_clock::now();

  // Created before the engine is opened: the test waits for the file to
  // appear when it wants to kill the worker during recovery.
  Journal journal(argv[2]);

  kvs_engine_options options;
  kvs_engine_options_init(&options);
  options.sync = sync_mode ? 1 : 0;
  // flush_interval_ms stays at its default: default mode tests the engine
  // as configured out of the box.
  options.l0_size_bytes = kvs::crash::kL0SizeBytes;
  kvs_engine* engine = nullptr;
  kvs_status status =
      kvs_engine_open(volume_path, &options, /*create_if_missing=*/1, &engine);
  if (status != KVS_OK) DieOnStatus("kvs_engine_open", status);
  kvs_region* region = nullptr;
  const std::string_view name = kvs::crash::kRegionName;
  status = kvs_region_open(engine, name.data(), name.size(), &region);
  if (status == KVS_NOT_FOUND) {
    status = kvs_region_create(engine, name.data(), name.size(), &region);
  }
  if (status != KVS_OK) DieOnStatus("opening region crash", status);

  uint64_t operations_until_sync = 1 + random() % kSyncIntervalOperationsMax;
  for (;; ++seq) {
    if (seq % 1024 == 0 &&
        std::chrono::steady_clock::now() - started > kRunTimeLimit) {
      std::fprintf(stderr, "kvs_crash_worker: not killed in time; stopping\n");
      return 2;
    }
    const auto key = static_cast<uint32_t>(random() % kvs::crash::kKeyCount);
    const std::string key_bytes = kvs::crash::KeyFor(key);
    if (random() % kDeleteOneIn == 0) {
      journal.Append(JournalType::kDeleteAttempted, key, seq);
      status = kvs_delete(region, key_bytes.data(), key_bytes.size());
      if (status != KVS_OK) DieOnStatus("kvs_delete", status);
    } else {
      const std::string value = kvs::crash::EncodeValue(key, seq);
      journal.Append(JournalType::kPutAttempted, key, seq);
      status = kvs_put(region, key_bytes.data(), key_bytes.size(), value.data(),
                       value.size());
      if (status != KVS_OK) DieOnStatus("kvs_put", status);
    }
    if (sync_mode) {
      journal.Append(JournalType::kAcknowledged, 0, seq);
    } else if (flush_mode && --operations_until_sync == 0) {
      status = kvs_region_sync(region);
      if (status != KVS_OK) DieOnStatus("kvs_region_sync", status);
      journal.Append(JournalType::kSynced, 0, seq);
      operations_until_sync = 1 + random() % kSyncIntervalOperationsMax;
    }
  }
}
