#include "btree/bloom_filter.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "testing/random_keys.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::btree {
namespace {

namespace format = bloom_filter_format;

// Keys of min_size..32 bytes. Below 4 bytes they repeat often (which the
// builder must handle, but which oversizes a filter for a rate measurement).
std::vector<std::string> RandomKeys(uint64_t seed, size_t count,
                                    size_t min_size = 0) {
  testing::RandomBytes random(seed);
  std::vector<std::string> keys;
  keys.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    keys.push_back(random.Key(min_size, 32));
  }
  return keys;
}

std::string BuildFilter(
    const std::vector<std::string>& keys, double bits_per_key = 10,
    uint64_t hash_seed = BloomFilterBuilder::default_hash_seed) {
  BloomFilterBuilder builder(bits_per_key, hash_seed);
  for (const auto& key : keys) {
    builder.AddKey(key);
  }
  return builder.Finish();
}

// The fraction of `absent_keys` (none of which was added) that the filter
// does not rule out.
double FalsePositiveRate(const BloomFilterReader& reader,
                         const std::vector<std::string>& absent_keys) {
  size_t false_positives = 0;
  for (const auto& key : absent_keys) {
    false_positives += reader.MayContain(key) ? 1 : 0;
  }
  return static_cast<double>(false_positives) / absent_keys.size();
}

// Keys of 4..32 bytes from another seed, minus any that happen to equal a
// present key.
std::vector<std::string> AbsentKeys(const std::vector<std::string>& present,
                                    uint64_t seed, size_t count) {
  const std::unordered_set<std::string> present_set(present.begin(),
                                                    present.end());
  std::vector<std::string> absent;
  for (auto& key : RandomKeys(seed, count, 4)) {
    if (present_set.count(key) == 0) {
      absent.push_back(std::move(key));
    }
  }
  return absent;
}

// Opens a copy of `bytes` that sits in a heap block of exactly its size, so
// that the sanitizer build reports any read past the end.
Status OpenExactCopy(std::string_view bytes) {
  auto copy = std::make_unique<char[]>(bytes.size());
  std::copy(bytes.begin(), bytes.end(), copy.get());
  BloomFilterReader reader;
  return BloomFilterReader::Open(std::string_view(copy.get(), bytes.size()),
                                 &reader);
}

// Recomputes the checksum after a test changed a field on purpose, so that
// Open's field checks, not the checksum, have to catch the change.
void Reseal(std::string* filter) {
  const size_t checksum_offset = filter->size() - format::checksum_size_bytes;
  coding::EncodeFixed32(
      filter->data() + checksum_offset,
      crc32c::Mask(crc32c::Value(filter->data(), checksum_offset)));
}

TEST(BloomFilterTest, EveryAddedKeyMayBeContained) {
  const auto keys = RandomKeys(1, 100000);
  const std::string filter = BuildFilter(keys);
  BloomFilterReader reader;
  ASSERT_TRUE(BloomFilterReader::Open(filter, &reader).ok());
  for (const auto& key : keys) {
    ASSERT_TRUE(reader.MayContain(key)) << ::testing::PrintToString(key);
  }
  EXPECT_EQ(reader.SizeBytes(), filter.size());
}

TEST(BloomFilterTest, FalsePositiveRateAtTenBitsPerKeyIsBelowTwoPercent) {
  const auto keys = RandomKeys(2, 100000, 4);
  const auto absent = AbsentKeys(keys, 3, 100000);
  ASSERT_GT(absent.size(), 99000u);
  const std::string filter = BuildFilter(keys, 10);
  BloomFilterReader reader;
  ASSERT_TRUE(BloomFilterReader::Open(filter, &reader).ok());
  const double rate = FalsePositiveRate(reader, absent);
  RecordProperty("false_positive_rate_percent", std::to_string(rate * 100));
  EXPECT_LT(rate, 0.02);
  EXPECT_GT(rate, 0.0) << "a 1% filter that never errs hashes too little";
}

TEST(BloomFilterTest, MoreBitsPerKeyGiveFewerFalsePositives) {
  const auto keys = RandomKeys(4, 20000, 4);
  const auto absent = AbsentKeys(keys, 5, 100000);
  double previous_rate = 1;
  for (double bits_per_key : {2.0, 5.0, 10.0, 20.0}) {
    const std::string filter = BuildFilter(keys, bits_per_key);
    BloomFilterReader reader;
    ASSERT_TRUE(BloomFilterReader::Open(filter, &reader).ok());
    const double rate = FalsePositiveRate(reader, absent);
    EXPECT_LT(rate, previous_rate) << bits_per_key << " bits per key";
    previous_rate = rate;
  }
  EXPECT_LT(previous_rate, 0.002) << "at 20 bits per key";
}

TEST(BloomFilterTest, EmptyFilterIsValidAndRejectsEveryKey) {
  BloomFilterBuilder builder;
  EXPECT_EQ(builder.KeyCount(), 0u);
  const std::string filter = builder.Finish();
  EXPECT_EQ(filter.size(), format::filter_size_bytes_min);
  BloomFilterReader reader;
  ASSERT_TRUE(BloomFilterReader::Open(filter, &reader).ok());
  for (const auto& key : RandomKeys(6, 1000)) {
    EXPECT_FALSE(reader.MayContain(key));
  }
  EXPECT_FALSE(reader.MayContain(""));
}

TEST(BloomFilterTest, RepeatedKeysAreCountedOnce) {
  BloomFilterBuilder builder;
  for (const char* key : {"a", "a", "a", "b", "b", "c"}) {
    builder.AddKey(key);
  }
  EXPECT_EQ(builder.KeyCount(), 3u);
  const std::string filter = builder.Finish();
  EXPECT_EQ(builder.KeyCount(), 0u) << "Finish leaves the builder empty";
  BloomFilterReader reader;
  ASSERT_TRUE(BloomFilterReader::Open(filter, &reader).ok());
  EXPECT_TRUE(reader.MayContain("a"));
  EXPECT_TRUE(reader.MayContain("b"));
  EXPECT_TRUE(reader.MayContain("c"));
}

TEST(BloomFilterTest, SizeAndProbeCountFollowKeyCountAndBitsPerKey) {
  struct Case {
    double bits_per_key;
    size_t key_count;
    uint32_t block_count;
    unsigned probe_count;
  };
  const Case cases[] = {
      {10, 1000, 20, 7},  // 10,000 bits round up to 20 blocks of 512
      {10, 1, 1, 7},     {1, 1000, 2, 1},   {3, 512, 3, 2},
      {23, 100, 5, 16},  {64, 100, 13, 16},
  };
  for (const auto& test_case : cases) {
    SCOPED_TRACE(::testing::Message() << test_case.bits_per_key << " bits/key, "
                                      << test_case.key_count << " keys");
    const std::string filter =
        BuildFilter(RandomKeys(7, test_case.key_count), test_case.bits_per_key);
    EXPECT_EQ(filter.size(),
              format::header_size_bytes +
                  test_case.block_count * format::block_size_bytes +
                  format::checksum_size_bytes);
    EXPECT_EQ(coding::DecodeFixed32(filter.data() + format::block_count_offset),
              test_case.block_count);
    EXPECT_EQ(static_cast<unsigned>(filter[format::probe_count_offset]),
              test_case.probe_count);
  }
}

TEST(BloomFilterTest, HeaderFollowsTheDocumentedLayout) {
  const std::string filter = BuildFilter({"key"}, 10, 0x0123456789abcdefull);
  EXPECT_EQ(filter.substr(0, 4), "KVBF");
  EXPECT_EQ(filter[format::version_offset], 1);
  EXPECT_EQ(filter[format::probe_count_offset], 7);
  EXPECT_EQ(coding::DecodeFixed32(filter.data() + format::block_count_offset),
            1u);
  EXPECT_EQ(coding::DecodeFixed64(filter.data() + format::hash_seed_offset),
            0x0123456789abcdefull);
  // One key sets at most probe-count bits (two probes may coincide), all in
  // the bit array.
  int bits_set = 0;
  for (size_t i = format::header_size_bytes;
       i < filter.size() - format::checksum_size_bytes; ++i) {
    bits_set += std::popcount(static_cast<unsigned char>(filter[i]));
  }
  EXPECT_GT(bits_set, 0);
  EXPECT_LE(bits_set, 7);
}

// Stored filters depend on the hash, the probe layout and the format; this
// pins all three through the checksum of a small filter.
TEST(BloomFilterTest, SerializedBytesArePinned) {
  const std::string filter = BuildFilter({"alpha", "beta", "gamma"}, 10);
  ASSERT_EQ(filter.size(), format::filter_size_bytes_min);
  EXPECT_EQ(coding::DecodeFixed32(filter.data() + filter.size() - 4),
            0xb33e3015u);
}

TEST(BloomFilterTest, HashSeedIsStoredAndUsed) {
  const auto keys = RandomKeys(8, 1000);
  const std::string first = BuildFilter(keys, 10, 1);
  const std::string second = BuildFilter(keys, 10, 2);
  EXPECT_NE(first.substr(format::header_size_bytes),
            second.substr(format::header_size_bytes));
  for (const std::string* filter : {&first, &second}) {
    BloomFilterReader reader;
    ASSERT_TRUE(BloomFilterReader::Open(*filter, &reader).ok());
    for (const auto& key : keys) {
      ASSERT_TRUE(reader.MayContain(key));
    }
  }
}

// The reader reads bytes, not words: any alignment of the buffer works.
TEST(BloomFilterTest, ReaderWorksAtAnyAlignment) {
  const auto keys = RandomKeys(9, 500);
  const std::string filter = BuildFilter(keys);
  for (size_t offset = 0; offset < 8; ++offset) {
    const std::string shifted = std::string(offset, 'x') + filter;
    BloomFilterReader reader;
    ASSERT_TRUE(BloomFilterReader::Open(
                    std::string_view(shifted).substr(offset), &reader)
                    .ok());
    for (const auto& key : keys) {
      ASSERT_TRUE(reader.MayContain(key)) << "offset " << offset;
    }
  }
}

TEST(BloomFilterTest, DefaultReaderRulesNothingOut) {
  const BloomFilterReader reader;
  EXPECT_TRUE(reader.MayContain("anything"));
  EXPECT_EQ(reader.SizeBytes(), 0u);
}

TEST(BloomFilterCorruptionTest, EveryBitFlipAndByteChangeIsRejected) {
  const std::string filter = BuildFilter(RandomKeys(10, 10));
  ASSERT_TRUE(OpenExactCopy(filter).ok());
  for (size_t position = 0; position < filter.size(); ++position) {
    for (unsigned pattern = 1; pattern < 256; pattern <<= 1) {
      std::string damaged = filter;
      damaged[position] = static_cast<char>(damaged[position] ^ pattern);
      const Status status = OpenExactCopy(damaged);
      ASSERT_TRUE(status.IsCorruption())
          << "byte " << position << " xor " << pattern << ": "
          << status.ToString();
    }
    std::string damaged = filter;
    damaged[position] = static_cast<char>(~damaged[position]);
    ASSERT_TRUE(OpenExactCopy(damaged).IsCorruption()) << "byte " << position;
  }
}

TEST(BloomFilterCorruptionTest, EveryTruncationAndExtensionIsRejected) {
  const std::string filter = BuildFilter(RandomKeys(11, 100));
  for (size_t size = 0; size < filter.size(); ++size) {
    const Status status =
        OpenExactCopy(std::string_view(filter).substr(0, size));
    ASSERT_TRUE(status.IsCorruption()) << "size " << size;
  }
  EXPECT_TRUE(OpenExactCopy(filter + '\0').IsCorruption());
  EXPECT_TRUE(OpenExactCopy(filter + std::string(64, '\0')).IsCorruption());
}

TEST(BloomFilterCorruptionTest, WrongVersionIsRejectedNamingTheVersion) {
  std::string filter = BuildFilter({"key"});
  filter[format::version_offset] = 2;
  for (bool resealed : {false, true}) {
    if (resealed) {
      Reseal(&filter);
    }
    const Status status = OpenExactCopy(filter);
    EXPECT_TRUE(status.IsCorruption());
    EXPECT_NE(status.message().find("version 2"), std::string_view::npos)
        << status.ToString();
  }
}

TEST(BloomFilterCorruptionTest, MessagesNameTheProblem) {
  const std::string filter = BuildFilter({"key"});
  const auto message_of = [](const std::string& bytes) {
    return std::string(OpenExactCopy(bytes).message());
  };
  EXPECT_NE(message_of(filter.substr(0, 10)).find("shorter"),
            std::string::npos);

  std::string bad_magic = filter;
  bad_magic[0] = 'X';
  EXPECT_NE(message_of(bad_magic).find("magic"), std::string::npos);

  std::string bad_checksum = filter;
  bad_checksum[format::header_size_bytes] ^= 1;
  EXPECT_NE(message_of(bad_checksum).find("checksum"), std::string::npos);
}

// Fields that pass the checksum (a writer bug, or a crafted input) are still
// validated before the reader trusts them.
TEST(BloomFilterCorruptionTest, ResealedBadFieldsAreRejected) {
  const std::string filter = BuildFilter({"key"});
  const auto rejects = [](std::string damaged, const char* expected_message) {
    Reseal(&damaged);
    const Status status = OpenExactCopy(damaged);
    EXPECT_TRUE(status.IsCorruption()) << expected_message;
    EXPECT_NE(status.message().find(expected_message), std::string_view::npos)
        << status.ToString();
  };
  for (unsigned probe_count : {0u, 17u, 255u}) {
    std::string damaged = filter;
    damaged[format::probe_count_offset] = static_cast<char>(probe_count);
    rejects(damaged, "probe count");
  }
  for (uint32_t block_count : {0u, 2u, 0xffffffffu}) {
    std::string damaged = filter;
    coding::EncodeFixed32(damaged.data() + format::block_count_offset,
                          block_count);
    rejects(damaged, "blocks need");
  }
  for (size_t offset : {6u, 7u, 12u, 15u, 24u, 63u}) {
    std::string damaged = filter;
    damaged[offset] = 1;
    rejects(damaged, "reserved");
  }
}

TEST(BloomFilterCorruptionTest, FailedOpenLeavesTheReaderUnchanged) {
  const std::string good = BuildFilter({"key"});
  BloomFilterReader reader;
  ASSERT_TRUE(BloomFilterReader::Open(good, &reader).ok());
  std::string bad = good;
  bad[format::header_size_bytes] ^= 1;
  EXPECT_TRUE(BloomFilterReader::Open(bad, &reader).IsCorruption());
  EXPECT_EQ(reader.SizeBytes(), good.size());
  EXPECT_TRUE(reader.MayContain("key"));
}

TEST(BloomFilterBuilderDeathTest, BitsPerKeyOutOfRangeIsAProgrammerError) {
  EXPECT_DEATH(BloomFilterBuilder(0.5), "bits per key");
  EXPECT_DEATH(BloomFilterBuilder(65), "bits per key");
  EXPECT_DEATH(BloomFilterBuilder{std::numeric_limits<double>::quiet_NaN()},
               "bits per key");
}

}  // namespace
}  // namespace kvs::btree
