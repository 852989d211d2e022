// The engine benchmark's records and workloads, as the JVM benchmark
// (kvs-bench, io.kvs.bench.engine) defines them, so that the native
// comparison runs the same data: 24-byte keys "user" + the 20 decimal digits
// of FNV-1a(record number); the KV size mixes of DESIGN.md §8 (33, 123 and
// 1023 B pairs); YCSB's core workloads with its scrambled zipfian (theta
// 0.99) and latest distributions. The operation sequences are drawn from
// random streams of their own, not the JVM's.

#ifndef KVS_TOOLS_ENGINE_BENCH_WORKLOAD_H_
#define KVS_TOOLS_ENGINE_BENCH_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvs::bench {

inline constexpr size_t kKeyBytes = 24;
// Scans read 1 to this many pairs, uniformly.
inline constexpr unsigned kScanLengthMax = 100;

enum class SizeClass : uint8_t { kSmall = 0, kMedium = 1, kLarge = 2 };
// Key + value bytes of a pair of the class.
size_t KvBytesOf(SizeClass size_class);

// Percentages of small, medium and large pairs.
struct Mix {
  std::string name;
  unsigned small_percent = 0;
  unsigned medium_percent = 0;
  unsigned large_percent = 0;

  // The class for 64 random bits (as KvMix.draw).
  SizeClass Draw(uint64_t bits) const;
  double AverageKvBytes() const;
  // S, M, L, SD, MD, LD, any case.
  static std::optional<Mix> Parse(std::string_view name);
};

uint64_t Fnv1a64(uint64_t value);
// SplitMix64's finaliser (as Dataset.mix64).
uint64_t Mix64(uint64_t value);
// Writes the key of record `number` (kKeyBytes bytes) to `out`.
void WriteKey(uint64_t number, char* out);
// The class a record is inserted with (as Dataset.insertClass).
SizeClass InsertClass(const Mix& mix, uint64_t seed, uint64_t number);

// SplitMix64: a small, fast stream per client thread.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [0, 1).
  double NextDouble();
  // Uniform in [0, bound); bound >= 1.
  uint64_t NextBelow(uint64_t bound);

 private:
  uint64_t state_;
};

// YCSB's zipfian generator (Gray et al.): ranks in [0, items), rank 0 the
// most popular; the item count may grow (the latest distribution).
class Zipfian {
 public:
  static constexpr double kYcsbTheta = 0.99;
  // zeta_n: Zeta(items, theta), computed once and shared by the threads.
  Zipfian(uint64_t items, double theta, double zeta_n);
  static double Zeta(uint64_t n, double theta);
  void GrowTo(uint64_t items);
  uint64_t Next(Random& random) const;

 private:
  double Eta() const;

  double theta_;
  double alpha_;
  double zeta2_;
  double half_pow_theta_;
  uint64_t items_;
  double zeta_n_;
  double eta_;
};

enum class Operation : uint8_t { kRead = 0, kUpdate, kInsert, kScan };
inline constexpr size_t kOperationKinds = 4;
const char* NameOf(Operation operation);

enum class Distribution : uint8_t { kInsertOrder, kZipfian, kLatest };

// A YCSB core workload: Load A inserts every record, runs A to E operate
// on them with these proportions.
struct Workload {
  const char* name;
  double read;
  double update;
  double insert;
  double scan;
  Distribution distribution;

  bool IsLoad() const { return distribution == Distribution::kInsertOrder; }
  // The operation for a uniform draw in [0, 1).
  Operation Choose(double draw) const;
  // loadA, runA ... runE, any case; null if unknown.
  static const Workload* Parse(std::string_view name);
};

}  // namespace kvs::bench

#endif  // KVS_TOOLS_ENGINE_BENCH_WORKLOAD_H_
