// CPU time of the calling thread, for attributing work to its kind
// (replication statistics).

#ifndef KVS_UTIL_THREAD_CPU_H_
#define KVS_UTIL_THREAD_CPU_H_

#include <time.h>

#include <cstdint>

namespace kvs {

// User + system CPU time the calling thread has used, in nanoseconds.
inline uint64_t ThreadCpuNanos() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(now.tv_nsec);
}

}  // namespace kvs

#endif  // KVS_UTIL_THREAD_CPU_H_
