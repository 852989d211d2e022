#include "util/check.h"

#include <cstdio>
#include <cstdlib>

namespace kvs::internal {

void CheckFailed(const char* file, int line, const char* condition,
                 const char* message) {
  std::fprintf(stderr, "kvs: invariant violated at %s:%d: %s %s\n", file, line,
               condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace kvs::internal
