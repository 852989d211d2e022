// Test helper: deterministic random keys and values whose bytes include
// '\x00' and '\xff', so that code treating keys as C strings or comparing
// them as signed chars fails its tests.

#ifndef KVS_TESTING_RANDOM_KEYS_H_
#define KVS_TESTING_RANDOM_KEYS_H_

#include <cstdint>
#include <random>
#include <string>

namespace kvs::testing {

class RandomBytes {
 public:
  explicit RandomBytes(uint64_t seed) : engine_(seed) {}

  // `size` bytes; about one in eight is '\x00' or '\xff'.
  std::string Bytes(size_t size);
  // A key of length in [min_size, max_size].
  std::string Key(size_t min_size, size_t max_size);
  uint64_t Uniform(uint64_t bound) {  // in [0, bound)
    return std::uniform_int_distribution<uint64_t>(0, bound - 1)(engine_);
  }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_RANDOM_KEYS_H_
