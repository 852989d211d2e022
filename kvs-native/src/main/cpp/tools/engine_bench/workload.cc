#include "tools/engine_bench/workload.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace kvs::bench {

size_t KvBytesOf(SizeClass size_class) {
  switch (size_class) {
    case SizeClass::kSmall:
      return 33;
    case SizeClass::kMedium:
      return 123;
    case SizeClass::kLarge:
      return 1023;
  }
  return 0;
}

SizeClass Mix::Draw(uint64_t bits) const {
  const unsigned percent = static_cast<unsigned>(bits % 100);
  if (percent < small_percent) return SizeClass::kSmall;
  return percent < small_percent + medium_percent ? SizeClass::kMedium
                                                  : SizeClass::kLarge;
}

double Mix::AverageKvBytes() const {
  return (small_percent * 33.0 + medium_percent * 123.0 +
          large_percent * 1023.0) /
         100.0;
}

std::optional<Mix> Mix::Parse(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  static const Mix kMixes[] = {{"S", 100, 0, 0},   {"M", 0, 100, 0},
                               {"L", 0, 0, 100},   {"SD", 60, 20, 20},
                               {"MD", 20, 60, 20}, {"LD", 20, 20, 60}};
  for (const Mix& mix : kMixes) {
    if (mix.name == upper) return mix;
  }
  return std::nullopt;
}

uint64_t Fnv1a64(uint64_t value) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (int i = 0; i < 8; ++i) {
    hash ^= (value >> (8 * i)) & 0xff;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void WriteKey(uint64_t number, char* out) {
  out[0] = 'u';
  out[1] = 's';
  out[2] = 'e';
  out[3] = 'r';
  uint64_t hash = Fnv1a64(number);
  for (size_t i = kKeyBytes; i > 4; --i) {
    out[i - 1] = static_cast<char>('0' + hash % 10);
    hash /= 10;
  }
}

SizeClass InsertClass(const Mix& mix, uint64_t seed, uint64_t number) {
  return mix.Draw(Mix64(seed ^ Mix64(number + 0x632be59bd9b4e019ull)));
}

uint64_t Random::Next() {
  state_ += 0x9e3779b97f4a7c15ull;
  return Mix64(state_);
}

double Random::NextDouble() {
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

uint64_t Random::NextBelow(uint64_t bound) {
  // Lemire's multiply-shift; the bias (bound / 2^64) is far below what a
  // benchmark notices.
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(Next()) * bound) >> 64);
}

Zipfian::Zipfian(uint64_t items, double theta, double zeta_n)
    : theta_(theta),
      alpha_(1 / (1 - theta)),
      zeta2_(Zeta(2, theta)),
      half_pow_theta_(std::pow(0.5, theta)),
      items_(std::max<uint64_t>(items, 1)),
      zeta_n_(zeta_n),
      eta_(Eta()) {}

double Zipfian::Zeta(uint64_t n, double theta) {
  double sum = 0;
  for (uint64_t i = 1; i <= n; ++i)
    sum += 1 / std::pow(static_cast<double>(i), theta);
  return sum;
}

double Zipfian::Eta() const {
  return (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) /
         (1 - zeta2_ / zeta_n_);
}

void Zipfian::GrowTo(uint64_t items) {
  if (items <= items_) return;
  for (uint64_t i = items_ + 1; i <= items; ++i) {
    zeta_n_ += 1 / std::pow(static_cast<double>(i), theta_);
  }
  items_ = items;
  eta_ = Eta();
}

uint64_t Zipfian::Next(Random& random) const {
  const double u = random.NextDouble();
  const double uz = u * zeta_n_;
  if (uz < 1) return 0;
  if (uz < 1 + half_pow_theta_) return std::min<uint64_t>(1, items_ - 1);
  const auto rank = static_cast<uint64_t>(
      static_cast<double>(items_) * std::pow(eta_ * u - eta_ + 1, alpha_));
  return std::min(rank, items_ - 1);
}

const char* NameOf(Operation operation) {
  switch (operation) {
    case Operation::kRead:
      return "read";
    case Operation::kUpdate:
      return "update";
    case Operation::kInsert:
      return "insert";
    case Operation::kScan:
      return "scan";
  }
  return "?";
}

Operation Workload::Choose(double draw) const {
  const double shares[] = {read, update, insert, scan};
  double cumulative = 0;
  Operation last = Operation::kRead;
  for (size_t i = 0; i < kOperationKinds; ++i) {
    if (shares[i] <= 0) continue;
    cumulative += shares[i];
    last = static_cast<Operation>(i);
    if (draw < cumulative) return last;
  }
  return last;  // rounding of the sum just below 1
}

const Workload* Workload::Parse(std::string_view name) {
  static const Workload kWorkloads[] = {
      {"loadA", 0, 0, 1, 0, Distribution::kInsertOrder},
      {"runA", 0.5, 0.5, 0, 0, Distribution::kZipfian},
      {"runB", 0.95, 0.05, 0, 0, Distribution::kZipfian},
      {"runC", 1, 0, 0, 0, Distribution::kZipfian},
      {"runD", 0.95, 0, 0.05, 0, Distribution::kLatest},
      {"runE", 0, 0, 0.05, 0.95, Distribution::kZipfian}};
  for (const Workload& workload : kWorkloads) {
    const std::string_view candidate(workload.name);
    if (candidate.size() == name.size() &&
        std::equal(candidate.begin(), candidate.end(), name.begin(),
                   [](char a, char b) {
                     return std::tolower(a) == std::tolower(b);
                   })) {
      return &workload;
    }
  }
  return nullptr;
}

}  // namespace kvs::bench
