#include "util/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kvs/kvs.h"
#include "testing/vectors.h"

namespace kvs::crc32c {
namespace {

TEST(Crc32cTest, PublishedVectorsMatchEveryImplementation) {
  const auto vectors = testing::LoadCrc32cVectors();
  ASSERT_GE(vectors.size(), 7u);
  for (const auto& vector : vectors) {
    SCOPED_TRACE(vector.name);
    EXPECT_EQ(Value(vector.input.data(), vector.input.size()), vector.expected);
    EXPECT_EQ(ExtendPortable(0, vector.input.data(), vector.input.size()),
              vector.expected);
    EXPECT_EQ(kvs_crc32c_extend(0, vector.input.data(), vector.input.size()),
              vector.expected);
    if (IsHardwareAccelerated()) {
      EXPECT_EQ(ExtendHardware(0, vector.input.data(), vector.input.size()),
                vector.expected);
    }
  }
}

TEST(Crc32cTest, HardwareAndPortableAgreeAtEveryAlignmentAndLength) {
  if (!IsHardwareAccelerated()) {
    GTEST_SKIP() << "CPU has no CRC32C instruction";
  }
  std::mt19937 random(42);
  std::vector<uint8_t> buffer(4096 + 16);
  for (auto& byte : buffer) {
    byte = static_cast<uint8_t>(random());
  }
  for (size_t alignment = 0; alignment < 16; ++alignment) {
    for (size_t length = 0; length <= 300; ++length) {
      const uint8_t* start = buffer.data() + alignment;
      ASSERT_EQ(ExtendHardware(0x12345678u, start, length),
                ExtendPortable(0x12345678u, start, length))
          << "alignment " << alignment << " length " << length;
    }
  }
  EXPECT_EQ(ExtendHardware(0, buffer.data(), 4096),
            ExtendPortable(0, buffer.data(), 4096));
}

// The hardware path joins three streams in blocks of 3 x 256 and 3 x 8192
// bytes; lengths around those boundaries exercise every join.
TEST(Crc32cTest, HardwareAndPortableAgreeAroundStreamBlockBoundaries) {
  if (!IsHardwareAccelerated()) {
    GTEST_SKIP() << "CPU has no CRC32C instruction";
  }
  std::mt19937 random(7);
  std::vector<uint8_t> buffer(3 * 3 * 8192 + 64);
  for (auto& byte : buffer) {
    byte = static_cast<uint8_t>(random());
  }
  for (size_t base : {768u, 1536u, 24576u, 49152u, 73728u}) {
    for (size_t length = base - 9; length <= base + 9; ++length) {
      for (size_t alignment : {0u, 3u}) {
        ASSERT_EQ(ExtendHardware(1, buffer.data() + alignment, length),
                  ExtendPortable(1, buffer.data() + alignment, length))
            << "length " << length << " alignment " << alignment;
      }
    }
  }
}

TEST(Crc32cTest, ExtendEqualsOneShotOverConcatenation) {
  const char text[] = "hello, replicated world";
  const size_t size = sizeof(text) - 1;
  const uint32_t whole = Value(text, size);
  for (size_t split = 0; split <= size; ++split) {
    EXPECT_EQ(Extend(Value(text, split), text + split, size - split), whole)
        << "split at " << split;
  }
}

TEST(Crc32cTest, DetectsEverySingleBitFlip) {
  std::vector<uint8_t> data(64);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<uint8_t>(i * 7);
  }
  const uint32_t original = Value(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(Value(data.data(), data.size()), original) << "bit " << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

TEST(Crc32cTest, MaskRoundTripsAndChangesTheValue) {
  for (uint32_t crc : {0u, 1u, 0xe3069283u, 0xffffffffu, 0x80000000u}) {
    EXPECT_EQ(Unmask(Mask(crc)), crc);
    EXPECT_NE(Mask(crc), crc);
    EXPECT_NE(Mask(Mask(crc)), crc);
  }
}

TEST(Crc32cTest, ZeroLengthWithNullDataIsIdentity) {
  EXPECT_EQ(kvs_crc32c_extend(0xdeadbeefu, nullptr, 0), 0xdeadbeefu);
}

}  // namespace
}  // namespace kvs::crc32c
