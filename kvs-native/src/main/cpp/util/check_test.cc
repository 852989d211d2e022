#include "util/check.h"

#include <gtest/gtest.h>

namespace {

TEST(CheckDeathTest, FailedCheckAbortsNamingTheCondition) {
  volatile int segment_count = 3;
  EXPECT_DEATH(KVS_CHECK_MSG(segment_count == 4, "catalog mismatch"),
               "invariant violated at .*check_test.cc:[0-9]+: "
               "segment_count == 4 catalog mismatch");
}

TEST(CheckTest, PassingCheckDoesNothing) {
  int evaluations = 0;
  KVS_CHECK(++evaluations == 1);
  EXPECT_EQ(evaluations, 1);
}

}  // namespace
