#include "util/coding.h"

#include <gtest/gtest.h>

#include <limits>

namespace kvs::coding {
namespace {

TEST(CodingTest, FixedWidthRoundTripsLittleEndian) {
  char buffer[8];
  EncodeFixed32(buffer, 0x04030201u);
  EXPECT_EQ(buffer[0], 1);
  EXPECT_EQ(buffer[3], 4);
  EXPECT_EQ(DecodeFixed32(buffer), 0x04030201u);
  EncodeFixed64(buffer, 0x0807060504030201ull);
  EXPECT_EQ(buffer[7], 8);
  EXPECT_EQ(DecodeFixed64(buffer), 0x0807060504030201ull);
  EncodeFixed16(buffer, 0xbeef);
  EXPECT_EQ(DecodeFixed16(buffer), 0xbeef);
}

TEST(CodingTest, VarintsRoundTripAtEveryWidth) {
  std::string encoded;
  std::vector<uint64_t> values;
  for (unsigned bits = 0; bits <= 64; ++bits) {
    const uint64_t value = bits == 64 ? std::numeric_limits<uint64_t>::max()
                                      : (uint64_t{1} << bits) - 1;
    values.push_back(value);
    PutVarint64(&encoded, value);
  }
  std::string_view input(encoded);
  for (uint64_t expected : values) {
    uint64_t decoded = 0;
    ASSERT_TRUE(GetVarint64(&input, &decoded));
    EXPECT_EQ(decoded, expected);
  }
  EXPECT_TRUE(input.empty());
}

TEST(CodingTest, TruncatedAndOverlongVarintsAreRejected) {
  std::string encoded;
  PutVarint64(&encoded, 1ull << 40);
  uint64_t value;
  for (size_t length = 0; length < encoded.size(); ++length) {
    std::string_view truncated(encoded.data(), length);
    EXPECT_FALSE(GetVarint64(&truncated, &value)) << length;
  }
  const std::string overlong(11, '\xff');
  std::string_view input(overlong);
  EXPECT_FALSE(GetVarint64(&input, &value));
  const std::string too_big = std::string(9, '\xff') + '\x02';
  input = too_big;
  EXPECT_FALSE(GetVarint64(&input, &value));
}

TEST(CodingTest, LengthPrefixedRejectsLengthsBeyondTheInput) {
  std::string encoded;
  PutLengthPrefixed(&encoded, std::string("k\0y", 3));
  std::string_view input(encoded), bytes;
  ASSERT_TRUE(GetLengthPrefixed(&input, &bytes));
  EXPECT_EQ(bytes, std::string_view("k\0y", 3));
  std::string lying;
  PutVarint64(&lying, 100);
  lying += "short";
  input = lying;
  EXPECT_FALSE(GetLengthPrefixed(&input, &bytes));
}

}  // namespace
}  // namespace kvs::coding
