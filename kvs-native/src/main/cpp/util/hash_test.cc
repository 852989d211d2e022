#include "util/hash.h"

#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "testing/random_keys.h"

namespace kvs {
namespace {

uint64_t HashOf(std::string_view bytes, uint64_t seed = 0) {
  return Hash64(bytes.data(), bytes.size(), seed);
}

// The Bloom filters on the device depend on these exact values: if this test
// fails, the hash changed, and every stored filter with it.
TEST(HashTest, GoldenValuesArePinned) {
  struct Golden {
    std::string_view input;
    uint64_t seed;
    uint64_t expected;
  };
  const Golden goldens[] = {
      {std::string_view(), 0, 0x7c2858441e8158e5ull},
      {std::string_view(), 1, 0x7925c9827ef6bce0ull},
      {"a", 0, 0x2325c3e78507fc25ull},
      {"abc", 0, 0x270062cd5487c9bcull},
      {"abcdefg", 0, 0x8604de9f6128dedeull},
      {"abcdefgh", 0, 0x682787cf5ec7a07aull},
      {"abcdefghi", 0, 0xeed8c6d22faf0d0eull},
      {std::string_view("\x00\xff\x00\xff", 4), 0, 0x674ad229ad57bf35ull},
      {"The quick brown fox jumps over the lazy dog", 0, 0x0a9ce6044d69a2c1ull},
      {"The quick brown fox jumps over the lazy dog", 0xdeadbeefull,
       0xcc647f753aa3d00full},
  };
  for (const auto& golden : goldens) {
    EXPECT_EQ(HashOf(golden.input, golden.seed), golden.expected)
        << "input \"" << golden.input << "\" seed " << golden.seed;
  }
}

TEST(HashTest, DifferentSeedsGiveDifferentHashes) {
  testing::RandomBytes random(1);
  for (int trial = 0; trial < 1000; ++trial) {
    const std::string input = random.Key(0, 40);
    EXPECT_NE(HashOf(input, 0), HashOf(input, 1));
    const uint64_t seed = random.engine()();
    EXPECT_NE(HashOf(input, seed), HashOf(input, seed ^ 1));
  }
  // For one input the seed maps one-to-one onto the hash (every step is
  // invertible), so many seeds give as many distinct values.
  std::set<uint64_t> hashes;
  for (uint64_t seed = 0; seed < 10000; ++seed) {
    hashes.insert(HashOf("key", seed));
  }
  EXPECT_EQ(hashes.size(), 10000u);
}

// Strict avalanche: flipping any one input bit flips each output bit with
// probability 1/2, so about 32 of the 64 output bits on average.
TEST(HashTest, EverySingleBitFlipChangesAboutHalfTheOutputBits) {
  constexpr size_t input_size_bytes = 32;
  constexpr int trials = 2000;
  testing::RandomBytes random(2);
  int flipped_bits_total[input_size_bytes * 8] = {};
  int flips_per_output_bit[64] = {};
  for (int trial = 0; trial < trials; ++trial) {
    std::string input = random.Bytes(input_size_bytes);
    const uint64_t original = HashOf(input);
    for (size_t bit = 0; bit < input_size_bytes * 8; ++bit) {
      input[bit / 8] ^= static_cast<char>(1u << (bit % 8));
      const uint64_t difference = original ^ HashOf(input);
      input[bit / 8] ^= static_cast<char>(1u << (bit % 8));
      flipped_bits_total[bit] += std::popcount(difference);
      for (int output_bit = 0; output_bit < 64; ++output_bit) {
        flips_per_output_bit[output_bit] += (difference >> output_bit) & 1;
      }
    }
  }
  for (size_t bit = 0; bit < input_size_bytes * 8; ++bit) {
    const double average =
        static_cast<double>(flipped_bits_total[bit]) / trials;
    EXPECT_GT(average, 24.0) << "input bit " << bit;
    EXPECT_LT(average, 40.0) << "input bit " << bit;
  }
  // No output bit may be stuck or merely copied: each flips close to half the
  // time over all 512,000 flips (a fair coin stays within 0.49..0.51).
  for (int output_bit = 0; output_bit < 64; ++output_bit) {
    const double rate = static_cast<double>(flips_per_output_bit[output_bit]) /
                        (trials * input_size_bytes * 8);
    EXPECT_GT(rate, 0.49) << "output bit " << output_bit;
    EXPECT_LT(rate, 0.51) << "output bit " << output_bit;
  }
}

// Each input sits in a heap block of exactly its size, so the sanitizer build
// reports any read past the end; the same bytes at another alignment must
// hash the same.
TEST(HashTest, EveryLengthUpTo64IsReadExactlyAndAlignmentDoesNotMatter) {
  testing::RandomBytes random(3);
  const std::string source = random.Bytes(64);
  std::set<uint64_t> prefix_hashes;
  std::set<uint64_t> zero_hashes;
  for (size_t size = 0; size <= 64; ++size) {
    auto exact = std::make_unique<char[]>(size);
    std::copy_n(source.data(), size, exact.get());
    const uint64_t hash = Hash64(exact.get(), size);
    for (size_t offset = 1; offset < 8; ++offset) {
      auto shifted = std::make_unique<char[]>(size + offset);
      std::copy_n(source.data(), size, shifted.get() + offset);
      EXPECT_EQ(Hash64(shifted.get() + offset, size), hash)
          << "size " << size << " offset " << offset;
    }
    prefix_hashes.insert(hash);
    // Inputs that differ only in how many zero bytes they hold must differ.
    auto zeros = std::make_unique<char[]>(size);
    std::fill_n(zeros.get(), size, '\0');
    zero_hashes.insert(Hash64(zeros.get(), size));
  }
  EXPECT_EQ(prefix_hashes.size(), 65u);
  EXPECT_EQ(zero_hashes.size(), 65u);
  EXPECT_EQ(Hash64(nullptr, 0), HashOf(""));
}

// Changing any single byte of a short input, at any position, changes the
// hash: the tail handling must not leave a byte out.
TEST(HashTest, EveryByteOfShortInputsCounts) {
  testing::RandomBytes random(4);
  for (size_t size = 1; size <= 24; ++size) {
    std::string input = random.Bytes(size);
    const uint64_t original = HashOf(input);
    for (size_t position = 0; position < size; ++position) {
      for (int delta = 1; delta < 256; ++delta) {
        input[position] = static_cast<char>(input[position] ^ delta);
        EXPECT_NE(HashOf(input), original)
            << "size " << size << " position " << position;
        input[position] = static_cast<char>(input[position] ^ delta);
      }
    }
  }
}

TEST(HashTest, RandomKeysDoNotCollide) {
  testing::RandomBytes random(5);
  std::set<std::string> keys;
  std::set<uint64_t> hashes;
  while (keys.size() < 100000) {
    std::string key = random.Key(1, 24);
    if (keys.insert(key).second) {
      hashes.insert(HashOf(key));
    }
  }
  EXPECT_EQ(hashes.size(), keys.size());
}

}  // namespace
}  // namespace kvs
