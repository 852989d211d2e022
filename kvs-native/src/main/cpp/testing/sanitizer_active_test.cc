// Compiled only into the sanitizer build. Proves that the sanitizers are
// really active and that a finding kills the process, so that a real finding
// anywhere in the native tests fails `./kvs test`.

#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>

namespace {

// Opaque to the optimizer, so the faults below really happen at run time.
volatile int opaque_index = 3;
volatile int opaque_large = INT_MAX;

// AddressSanitizer: UBSan cannot see a use after free.
TEST(SanitizerActiveDeathTest, UseAfterFreeIsFatal) {
  EXPECT_DEATH(
      {
        char* volatile dangling = static_cast<char*>(std::malloc(16));
        std::free(dangling);
        dangling[opaque_index] = 1;
      },
      "heap-use-after-free");
}

// UndefinedBehaviorSanitizer, with recovery off.
TEST(SanitizerActiveDeathTest, SignedOverflowIsFatal) {
  EXPECT_DEATH(
      {
        int value = opaque_large;
        value += 1;
        opaque_large = value;
      },
      "signed integer overflow");
}

}  // namespace
