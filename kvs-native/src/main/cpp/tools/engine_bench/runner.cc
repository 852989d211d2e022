#include "tools/engine_bench/runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "util/check.h"

namespace kvs::bench {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t NanosSince(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
          .count());
}

// CPU time and device bytes of the whole process so far.
struct Usage {
  uint64_t cpu_nanos = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;

  static Usage Now() {
    Usage usage;
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    usage.cpu_nanos =
        static_cast<uint64_t>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) *
            1'000'000'000ull +
        static_cast<uint64_t>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) *
            1000ull;
    // read_bytes / write_bytes: what reached the block layer (direct I/O
    // included), the counters the JVM benchmark reads too.
    if (FILE* io = std::fopen("/proc/self/io", "r")) {
      char line[128];
      while (std::fgets(line, sizeof line, io) != nullptr) {
        unsigned long long value = 0;
        if (std::sscanf(line, "read_bytes: %llu", &value) == 1) {
          usage.read_bytes = value;
        } else if (std::sscanf(line, "write_bytes: %llu", &value) == 1) {
          usage.write_bytes = value;
        }
      }
      std::fclose(io);
    }
    return usage;
  }
  uint64_t device_bytes() const { return read_bytes + write_bytes; }
};

constexpr auto kDrainPoll = std::chrono::milliseconds(200);
constexpr uint64_t kQuietDeviceBytes = 256 << 10;
constexpr double kQuietCpuShare = 0.15;

// Waits until the process did no I/O and almost no CPU work for `quiet_ms`
// (as the JVM's Quiescence); returns how long it stayed busy.
uint64_t Drain(const RunSettings& settings, bool* timed_out) {
  const auto start = Clock::now();
  auto last_busy = start;
  Usage previous = Usage::Now();
  const double poll_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(kDrainPoll).count();
  while (true) {
    std::this_thread::sleep_for(kDrainPoll);
    const auto now = Clock::now();
    const Usage current = Usage::Now();
    const bool quiet =
        current.device_bytes() - previous.device_bytes() < kQuietDeviceBytes &&
        static_cast<double>(current.cpu_nanos - previous.cpu_nanos) <
            kQuietCpuShare * poll_nanos;
    previous = current;
    if (!quiet) last_busy = now;
    if (now - last_busy >= std::chrono::milliseconds(settings.quiet_ms)) {
      *timed_out = false;
      return static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(last_busy -
                                                               start)
              .count());
    }
    if (now - start >= std::chrono::milliseconds(settings.drain_limit_ms)) {
      *timed_out = true;
      return NanosSince(start);
    }
  }
}

// Allocated and apparent bytes of every file under `directory`.
void AddDiskUsage(const std::string& directory, uint64_t* allocated,
                  uint64_t* apparent) {
  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 ||
        std::strcmp(entry->d_name, "..") == 0) {
      continue;
    }
    const std::string path = directory + "/" + entry->d_name;
    struct stat info {};
    if (lstat(path.c_str(), &info) != 0) continue;
    if (S_ISDIR(info.st_mode)) {
      AddDiskUsage(path, allocated, apparent);
    } else if (S_ISREG(info.st_mode)) {
      *allocated += static_cast<uint64_t>(info.st_blocks) * 512;
      *apparent += static_cast<uint64_t>(info.st_size);
    }
  }
  closedir(dir);
}

// Random value contents, shared read-only; values are slices of it
// (compression is off in every system).
const std::string& ValuePool() {
  static const std::string pool = [] {
    std::string bytes(64 << 10, '\0');
    Random random(0x5eed);
    for (size_t i = 0; i < bytes.size(); i += 8) {
      const uint64_t bits = random.Next();
      std::memcpy(bytes.data() + i, &bits, 8);
    }
    return bytes;
  }();
  return pool;
}

// Picks the record an existing-key operation touches.
class Chooser {
 public:
  Chooser(Distribution distribution, uint64_t zipfian_items, uint64_t existing,
          double zeta)
      : distribution_(distribution),
        zipfian_items_(zipfian_items),
        zipfian_(
            distribution == Distribution::kLatest ? existing : zipfian_items,
            Zipfian::kYcsbTheta, zeta) {}

  uint64_t Next(Random& random, uint64_t existing) {
    switch (distribution_) {
      case Distribution::kZipfian:
        // YCSB's scrambled zipfian: ranks scattered over the records by a
        // hash; ranks past the records inserted so far are drawn again.
        for (int attempt = 0; attempt < 64; ++attempt) {
          const uint64_t record =
              Fnv1a64(zipfian_.Next(random)) % zipfian_items_;
          if (record < existing) return record;
        }
        return random.NextBelow(existing);
      case Distribution::kLatest: {
        zipfian_.GrowTo(existing);
        const uint64_t rank = zipfian_.Next(random);
        return existing - 1 - std::min(rank, existing - 1);
      }
      case Distribution::kInsertOrder:
        break;
    }
    return random.NextBelow(existing);
  }

 private:
  const Distribution distribution_;
  const uint64_t zipfian_items_;
  Zipfian zipfian_;
};

struct Client {
  uint64_t operations = 0;
  Clock::time_point deadline;
  bool truncated = false;
  uint64_t kv_bytes = 0;
  uint64_t not_found = 0;
  uint64_t scan_pairs = 0;
  LatencyHistogram by_operation[kOperationKinds];
  Status status;
};

void RunClient(BenchSystem* system, Dataset* dataset, const Workload& workload,
               Chooser chooser, uint64_t seed, Client* client) {
  Random random(seed);
  const std::string& pool = ValuePool();
  char key[kKeyBytes];
  std::string value;
  for (uint64_t done = 0; done < client->operations; ++done) {
    if (done % 256 == 255 && Clock::now() >= client->deadline) {
      client->truncated = true;
      return;
    }
    const Operation operation = workload.IsLoad()
                                    ? Operation::kInsert
                                    : workload.Choose(random.NextDouble());
    uint64_t number = 0;
    SizeClass size_class = SizeClass::kSmall;
    if (operation == Operation::kInsert) {
      client->status = dataset->ClaimInsert(&number);
      if (!client->status.ok()) return;
      size_class = InsertClass(dataset->mix(), dataset->seed(), number);
    } else {
      number = chooser.Next(random, dataset->Existing());
      if (operation == Operation::kUpdate) {
        size_class = dataset->mix().Draw(random.Next());
      }
    }
    WriteKey(number, key);
    const std::string_view key_view(key, kKeyBytes);
    const auto begin = Clock::now();
    switch (operation) {
      case Operation::kInsert:
      case Operation::kUpdate: {
        const size_t size = KvBytesOf(size_class) - kKeyBytes;
        const size_t at = random.NextBelow(pool.size() - size);
        client->status =
            system->Put(key_view, std::string_view(pool).substr(at, size));
        if (client->status.ok()) {
          dataset->Written(number, size_class);
          client->kv_bytes += kKeyBytes + size;
        }
        break;
      }
      case Operation::kRead:
        client->status = system->Get(key_view, &value);
        if (client->status.IsNotFound()) {
          ++client->not_found;
          client->status = Status::Ok();
        } else if (client->status.ok()) {
          client->kv_bytes += kKeyBytes + value.size();
        }
        break;
      case Operation::kScan: {
        const size_t length = 1 + random.NextBelow(kScanLengthMax);
        uint64_t bytes = 0;
        client->status =
            system->Scan(key_view, length, &client->scan_pairs, &bytes);
        client->kv_bytes += bytes;
        break;
      }
    }
    client->by_operation[static_cast<size_t>(operation)].Record(
        NanosSince(begin));
    if (!client->status.ok()) return;
  }
}

}  // namespace

Dataset::Dataset(Mix mix, uint64_t seed, uint64_t capacity)
    : mix_(std::move(mix)),
      seed_(seed),
      capacity_(capacity),
      classes_(new std::atomic<uint8_t>[capacity]) {
  for (uint64_t i = 0; i < capacity; ++i) {
    classes_[i].store(0, std::memory_order_relaxed);
  }
}

Status Dataset::ClaimInsert(uint64_t* number) {
  *number = next_insert_.fetch_add(1, std::memory_order_relaxed);
  if (*number >= capacity_) {
    return Status::InvalidArgument("record " + std::to_string(*number) +
                                   " exceeds the dataset's capacity");
  }
  return Status::Ok();
}

void Dataset::Written(uint64_t number, SizeClass size_class) {
  classes_[number].store(static_cast<uint8_t>(size_class) + 1,
                         std::memory_order_release);
}

uint64_t Dataset::Existing() {
  uint64_t existing = existing_.load(std::memory_order_acquire);
  while (existing < capacity_ &&
         classes_[existing].load(std::memory_order_acquire) != 0) {
    // On failure `existing` is what another thread advanced it to.
    if (existing_.compare_exchange_weak(existing, existing + 1)) ++existing;
  }
  return existing;
}

uint64_t Dataset::LiveKvBytes() const {
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < capacity_; ++i) {
    const uint8_t code = classes_[i].load(std::memory_order_relaxed);
    if (code != 0) bytes += KvBytesOf(static_cast<SizeClass>(code - 1));
  }
  return bytes;
}

Status RunPhase(const std::string& system_name, BenchSystem* system,
                const std::string& directory, Dataset* dataset,
                const Workload& workload, uint64_t operations,
                const RunSettings& settings, PhaseResult* result) {
  const uint64_t existing = dataset->Existing();
  if (!workload.IsLoad() && existing == 0) {
    return Status::InvalidArgument(std::string(workload.name) +
                                   " needs loaded records");
  }
  // YCSB sizes the zipfian's item space for twice the expected inserts.
  const auto expected_inserts = static_cast<uint64_t>(
      std::ceil(static_cast<double>(operations) * workload.insert));
  const uint64_t zipfian_items = existing + 2 * expected_inserts;
  double zeta = 0;
  if (workload.distribution == Distribution::kZipfian) {
    zeta = Zipfian::Zeta(zipfian_items, Zipfian::kYcsbTheta);
  } else if (workload.distribution == Distribution::kLatest) {
    zeta = Zipfian::Zeta(existing, Zipfian::kYcsbTheta);
  }
  std::vector<Client> clients(settings.threads);
  std::vector<std::thread> threads;
  const Usage before = Usage::Now();
  const auto start = Clock::now();
  for (unsigned i = 0; i < settings.threads; ++i) {
    clients[i].deadline =
        start + std::chrono::milliseconds(settings.phase_limit_ms);
    clients[i].operations =
        operations / settings.threads + (i < operations % settings.threads);
    // Each thread of each phase its own stream, the same in every run.
    uint64_t name_hash = 0;
    for (const char* c = workload.name; *c != '\0'; ++c) {
      name_hash = name_hash * 31 + static_cast<uint8_t>(*c);
    }
    const uint64_t seed =
        Mix64(settings.seed ^ Mix64(name_hash) ^ Mix64(Fnv1a64(i)));
    threads.emplace_back(RunClient, system, dataset, std::cref(workload),
                         Chooser(workload.distribution, zipfian_items,
                                 std::max<uint64_t>(existing, 1), zeta),
                         seed, &clients[i]);
  }
  for (auto& thread : threads) thread.join();
  result->nanos = NanosSince(start);
  const Usage window = Usage::Now();
  for (const Client& client : clients) {
    if (!client.status.ok()) {
      return client.status.WithContext(system_name + " " + workload.name +
                                       ": ");
    }
  }
  if (settings.drain_limit_ms > 0) {
    result->drain_nanos = Drain(settings, &result->drain_timed_out);
  }
  const Usage after = Usage::Now();

  result->system = system_name;
  result->mix = dataset->mix().name;
  result->workload = workload.name;
  result->threads = settings.threads;
  for (const Client& client : clients) {
    result->truncated |= client.truncated;
    result->kv_bytes += client.kv_bytes;
    result->not_found += client.not_found;
    result->scan_pairs += client.scan_pairs;
    for (size_t i = 0; i < kOperationKinds; ++i) {
      result->by_operation[i].Merge(client.by_operation[i]);
      result->all.Merge(client.by_operation[i]);
    }
  }
  result->operations = result->all.count();
  result->cpu_nanos = after.cpu_nanos - before.cpu_nanos;
  result->device_read_bytes = after.read_bytes - before.read_bytes;
  result->device_write_bytes = after.write_bytes - before.write_bytes;
  result->window_cpu_nanos = window.cpu_nanos - before.cpu_nanos;
  result->window_device_bytes = window.device_bytes() - before.device_bytes();
  AddDiskUsage(directory, &result->disk_allocated_bytes,
               &result->disk_apparent_bytes);
  result->live_kv_bytes = dataset->LiveKvBytes();
  result->records = dataset->Existing();
  result->engine_stats_json = system->StatsJson();
  return Status::Ok();
}

double PhaseResult::OpsPerSec() const {
  return nanos == 0 ? 0 : static_cast<double>(operations) * 1e9 / nanos;
}

double PhaseResult::CpuMicrosPerOp() const {
  return operations == 0 ? NAN : cpu_nanos / 1e3 / operations;
}

double PhaseResult::IoAmplification() const {
  return kv_bytes == 0
             ? NAN
             : static_cast<double>(device_read_bytes + device_write_bytes) /
                   kv_bytes;
}

double PhaseResult::SpaceAmplification() const {
  return live_kv_bytes == 0
             ? NAN
             : static_cast<double>(disk_allocated_bytes) / live_kv_bytes;
}

namespace {

std::string Number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string Summary(const LatencyHistogram& histogram) {
  return "{\"count\":" + std::to_string(histogram.count()) +
         ",\"p50_us\":" + Number(histogram.Percentile(50) / 1e3) +
         ",\"p99_us\":" + Number(histogram.Percentile(99) / 1e3) +
         ",\"p999_us\":" + Number(histogram.Percentile(99.9) / 1e3) +
         ",\"max_us\":" + Number(histogram.max() / 1e3) + "}";
}

}  // namespace

std::string PhaseResult::ToJson() const {
  std::string per_operation;
  for (size_t i = 0; i < kOperationKinds; ++i) {
    if (by_operation[i].count() == 0) continue;
    per_operation += (per_operation.empty() ? "\"" : ",\"") +
                     std::string(NameOf(static_cast<Operation>(i))) +
                     "\":" + Summary(by_operation[i]);
  }
  const double window_cpu =
      operations == 0 ? NAN : window_cpu_nanos / 1e3 / operations;
  const double window_io =
      kv_bytes == 0 ? NAN : static_cast<double>(window_device_bytes) / kv_bytes;
  return "{\"api\":\"native\",\"system\":\"" + system + "\",\"mix\":\"" + mix +
         "\",\"workload\":\"" + workload +
         "\",\"ops_per_sec\":" + Number(OpsPerSec()) +
         ",\"cpu_us_per_op\":" + Number(CpuMicrosPerOp()) +
         ",\"io_amplification\":" + Number(IoAmplification()) +
         ",\"space_amplification\":" + Number(SpaceAmplification()) +
         ",\"p50_us\":" + Number(all.Percentile(50) / 1e3) +
         ",\"p99_us\":" + Number(all.Percentile(99) / 1e3) +
         ",\"p999_us\":" + Number(all.Percentile(99.9) / 1e3) +
         ",\"max_us\":" + Number(all.max() / 1e3) +
         ",\"operations\":" + std::to_string(operations) +
         ",\"seconds\":" + Number(nanos / 1e9) +
         ",\"truncated\":" + (truncated ? "true" : "false") +
         ",\"threads\":" + std::to_string(threads) +
         ",\"records\":" + std::to_string(records) +
         ",\"kv_bytes\":" + std::to_string(kv_bytes) +
         ",\"device_read_bytes\":" + std::to_string(device_read_bytes) +
         ",\"device_write_bytes\":" + std::to_string(device_write_bytes) +
         ",\"cpu_seconds\":" + Number(cpu_nanos / 1e9) +
         ",\"drain_seconds\":" + Number(drain_nanos / 1e9) +
         ",\"drain_timed_out\":" + (drain_timed_out ? "true" : "false") +
         ",\"cpu_us_per_op_window\":" + Number(window_cpu) +
         ",\"io_amplification_window\":" + Number(window_io) +
         ",\"disk_allocated_bytes\":" + std::to_string(disk_allocated_bytes) +
         ",\"disk_apparent_bytes\":" + std::to_string(disk_apparent_bytes) +
         ",\"live_kv_bytes\":" + std::to_string(live_kv_bytes) +
         ",\"not_found\":" + std::to_string(not_found) +
         ",\"scan_pairs\":" + std::to_string(scan_pairs) +
         ",\"latency_by_op\":{" + per_operation + "},\"engine\":{" +
         engine_stats_json + "}}";
}

}  // namespace kvs::bench
