// kvs_engine_bench: the engine benchmark in C++, db_bench style, so that
// neither engine pays a JNI crossing in the other's favour. One process
// runs one system on one KV size mix: Load A, then the named runs, each
// printed as one JSON line on stdout (the JVM benchmark's field names, plus
// "api":"native") and a progress line on stderr. `./kvs bench engine
// --native` runs it for every system and mix (one process each, so that the
// CPU and I/O counted are that system's) and reports it beside the JVM
// comparison.
//
//   kvs_engine_bench --system kvs|rocksdb|rocksdb-wal50|blobdb --mix SD
//       --dir DIR [--workloads runA,runC,runE] [--records N]
//       [--operations N] [--scan-operations N] [--threads 4]
//       [--cache-mib 128] [--l0-mib 32] [--blob-min-bytes 64] [--seed N]
//       [--value-cache-percent P (KVS: a fixed split; default: adaptive)]
//       [--stale-percent P (KVS: stale_fraction_max; default: the engine's)]
//       [--quiet-ms 1000] [--drain-limit-seconds 600 (0: none)]
//       [--phase-limit-seconds 1800]

#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/engine_bench/runner.h"
#include "tools/engine_bench/systems.h"
#include "tools/engine_bench/workload.h"

namespace kvs::bench {
namespace {

struct Arguments {
  std::string system;
  std::string mix = "SD";
  std::string directory;
  std::vector<const Workload*> workloads;
  uint64_t records = 0;
  uint64_t operations = 400'000;
  uint64_t scan_operations = 40'000;
  SystemSettings settings;
  RunSettings run;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "kvs_engine_bench: %s\n"
               "usage: kvs_engine_bench --system kvs|rocksdb|rocksdb-wal50|"
               "blobdb --mix SD --dir DIR [--workloads runA,runC,runE] "
               "[--records N] [--operations N] [--scan-operations N] "
               "[--threads N] [--cache-mib N] [--l0-mib N] "
               "[--blob-min-bytes N] [--value-cache-percent P] "
               "[--stale-percent P] "
               "[--seed N] [--quiet-ms N] "
               "[--drain-limit-seconds N] [--phase-limit-seconds N]\n",
               problem.c_str());
  std::exit(2);
}

uint64_t Number(const std::string& name, const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-') {
    Usage(name + " needs a non-negative number: " + text);
  }
  return value;
}

Arguments Parse(int argc, char** argv) {
  Arguments arguments;
  std::string workloads = "runA,runC,runE";
  uint64_t cache_mib = 128;
  uint64_t l0_mib = 32;
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (i + 1 >= argc) Usage(name + " needs a value");
    const char* value = argv[i + 1];
    if (name == "--system") {
      arguments.system = value;
    } else if (name == "--mix") {
      arguments.mix = value;
    } else if (name == "--dir") {
      arguments.directory = value;
    } else if (name == "--workloads") {
      workloads = value;
    } else if (name == "--records") {
      arguments.records = Number(name, value);
    } else if (name == "--operations") {
      arguments.operations = Number(name, value);
    } else if (name == "--scan-operations") {
      arguments.scan_operations = Number(name, value);
    } else if (name == "--threads") {
      arguments.run.threads = static_cast<unsigned>(Number(name, value));
    } else if (name == "--cache-mib") {
      cache_mib = Number(name, value);
    } else if (name == "--l0-mib") {
      l0_mib = Number(name, value);
    } else if (name == "--blob-min-bytes") {
      arguments.settings.blob_min_bytes = Number(name, value);
    } else if (name == "--value-cache-percent") {
      const uint64_t percent = Number(name, value);
      if (percent > 90) Usage("--value-cache-percent must be at most 90");
      arguments.settings.value_cache_percent = static_cast<unsigned>(percent);
    } else if (name == "--stale-percent") {
      const uint64_t percent = Number(name, value);
      if (percent == 0 || percent > 100) {
        Usage("--stale-percent must be 1 to 100");
      }
      arguments.settings.stale_percent = static_cast<unsigned>(percent);
    } else if (name == "--seed") {
      arguments.run.seed = Number(name, value);
    } else if (name == "--quiet-ms") {
      arguments.run.quiet_ms = Number(name, value);
    } else if (name == "--phase-limit-seconds") {
      arguments.run.phase_limit_ms = 1000 * Number(name, value);
    } else if (name == "--drain-limit-seconds") {
      arguments.run.drain_limit_ms = 1000 * Number(name, value);
    } else {
      Usage("unknown option " + name);
    }
  }
  if (arguments.system.empty() || arguments.directory.empty()) {
    Usage("--system and --dir are required");
  }
  if (arguments.run.threads == 0 || cache_mib == 0 || l0_mib == 0 ||
      arguments.run.phase_limit_ms == 0 || arguments.run.quiet_ms == 0) {
    Usage(
        "--threads, --cache-mib, --l0-mib, --quiet-ms and "
        "--phase-limit-seconds must be positive");
  }
  arguments.settings.cache_bytes = cache_mib << 20;
  arguments.settings.l0_bytes = l0_mib << 20;
  arguments.workloads.push_back(Workload::Parse("loadA"));
  size_t from = 0;
  while (from <= workloads.size()) {
    size_t to = workloads.find(',', from);
    if (to == std::string::npos) to = workloads.size();
    const std::string name = workloads.substr(from, to - from);
    from = to + 1;
    if (name.empty()) continue;
    const Workload* workload = Workload::Parse(name);
    if (workload == nullptr) {
      Usage("unknown workload '" + name + "'; known: loadA, runA ... runE");
    }
    if (!workload->IsLoad()) arguments.workloads.push_back(workload);
  }
  return arguments;
}

int Run(const Arguments& arguments) {
  const std::optional<Mix> mix = Mix::Parse(arguments.mix);
  if (!mix.has_value()) Usage("unknown mix " + arguments.mix);
  const uint64_t records =
      arguments.records > 0
          ? arguments.records
          : static_cast<uint64_t>(
                4.0 * static_cast<double>(arguments.settings.cache_bytes) /
                mix->AverageKvBytes());
  // Room for every insert the runs may make.
  uint64_t capacity = records;
  for (const Workload* workload : arguments.workloads) {
    if (workload->IsLoad()) continue;
    capacity +=
        workload->scan > 0 ? arguments.scan_operations : arguments.operations;
  }
  if (mkdir(arguments.directory.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "kvs_engine_bench: cannot create %s: %s\n",
                 arguments.directory.c_str(), std::strerror(errno));
    return 1;
  }
  std::unique_ptr<BenchSystem> system;
  Status status = OpenSystem(arguments.system, arguments.directory,
                             arguments.settings, &system);
  if (!status.ok()) {
    std::fprintf(stderr, "kvs_engine_bench: %s\n", status.ToString().c_str());
    return 1;
  }
  Dataset dataset(*mix, arguments.run.seed, capacity);
  for (const Workload* workload : arguments.workloads) {
    const uint64_t operations = workload->IsLoad()   ? records
                                : workload->scan > 0 ? arguments.scan_operations
                                                     : arguments.operations;
    PhaseResult result;
    status = RunPhase(arguments.system + "-native", system.get(),
                      arguments.directory, &dataset, *workload, operations,
                      arguments.run, &result);
    if (!status.ok()) {
      std::fprintf(stderr, "kvs_engine_bench: %s\n", status.ToString().c_str());
      return 1;
    }
    std::printf("%s\n", result.ToJson().c_str());
    std::fflush(stdout);
    std::fprintf(stderr,
                 "  %-3s %-20s %-5s %'11" PRIu64
                 " ops in %6.1f s: %9.0f ops/s, cpu %6.2f us/op, io amp "
                 "%6.2f, space amp %5.2f, p99 %.1f us, drain %.1f s%s\n",
                 result.mix.c_str(), result.system.c_str(),
                 result.workload.c_str(), result.operations, result.nanos / 1e9,
                 result.OpsPerSec(), result.CpuMicrosPerOp(),
                 result.IoAmplification(), result.SpaceAmplification(),
                 result.all.Percentile(99) / 1e3, result.drain_nanos / 1e9,
                 result.truncated         ? " (stopped at the phase time limit)"
                 : result.drain_timed_out ? " (still busy at the drain limit)"
                                          : "");
  }
  return 0;
}

}  // namespace
}  // namespace kvs::bench

int main(int argc, char** argv) {
  return kvs::bench::Run(kvs::bench::Parse(argc, argv));
}
