#include "tools/engine_bench/workload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvs::bench {
namespace {

std::string KeyOf(uint64_t number) {
  std::string key(kKeyBytes, '\0');
  WriteKey(number, key.data());
  return key;
}

TEST(EngineBenchWorkloadTest, KeysAreTheJvmBenchmarksKeys) {
  // io.kvs.bench.engine.Keys.toString(n) for these numbers.
  EXPECT_EQ(KeyOf(0), "user12161962213042174405");
  EXPECT_EQ(KeyOf(1), "user09929646806074584996");
  EXPECT_EQ(KeyOf(42), "user18391255480883862255");
  EXPECT_EQ(KeyOf(1'000'000), "user01011632231655643464");
}

TEST(EngineBenchWorkloadTest, MixesDrawTheirShares) {
  const auto mix = Mix::Parse("sd");
  ASSERT_TRUE(mix.has_value());
  EXPECT_NEAR(mix->AverageKvBytes(), 0.6 * 33 + 0.2 * 123 + 0.2 * 1023, 1e-9);
  Random random(1);
  size_t counts[3] = {};
  for (int i = 0; i < 100'000; ++i) {
    ++counts[static_cast<size_t>(mix->Draw(random.Next()))];
  }
  EXPECT_NEAR(counts[0] / 1e5, 0.6, 0.01);
  EXPECT_NEAR(counts[1] / 1e5, 0.2, 0.01);
  EXPECT_NEAR(counts[2] / 1e5, 0.2, 0.01);
  EXPECT_FALSE(Mix::Parse("XL").has_value());
}

TEST(EngineBenchWorkloadTest, ZipfianFavoursTheFirstRanks) {
  constexpr uint64_t kItems = 10'000;
  const Zipfian zipfian(kItems, Zipfian::kYcsbTheta,
                        Zipfian::Zeta(kItems, Zipfian::kYcsbTheta));
  Random random(3);
  std::vector<uint64_t> counts(kItems);
  for (int i = 0; i < 200'000; ++i) {
    const uint64_t rank = zipfian.Next(random);
    ASSERT_LT(rank, kItems);
    ++counts[rank];
  }
  // With theta 0.99 over 10,000 items, rank 0 takes ~10 % of the draws and
  // the ranks fall off about as 1/rank.
  EXPECT_NEAR(counts[0] / 2e5, 1 / Zipfian::Zeta(kItems, 0.99), 0.01);
  EXPECT_GT(counts[0], counts[9] * 5);
  EXPECT_GT(counts[9], counts[999] * 5);
}

TEST(EngineBenchWorkloadTest, WorkloadsChooseTheirProportions) {
  const Workload* run_e = Workload::Parse("RUNE");
  ASSERT_NE(run_e, nullptr);
  EXPECT_EQ(run_e->Choose(0.01), Operation::kInsert);
  EXPECT_EQ(run_e->Choose(0.5), Operation::kScan);
  EXPECT_EQ(run_e->Choose(0.9999999), Operation::kScan);
  EXPECT_TRUE(Workload::Parse("loadA")->IsLoad());
  EXPECT_EQ(Workload::Parse("runZ"), nullptr);
}

}  // namespace
}  // namespace kvs::bench
