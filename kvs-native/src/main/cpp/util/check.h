// Always-on invariant checks.
//
// Two kinds of failure exist in this library. Operating errors (bad input, a
// full disk, a dead peer) are returned as a Status. A broken invariant is a
// programmer error: continuing would risk writing wrong data, so the process
// stops with a message naming the condition and its place. KVS_CHECK stays on
// in release builds; it is meant for format, allocator and offset invariants,
// not for validating input.

#ifndef KVS_UTIL_CHECK_H_
#define KVS_UTIL_CHECK_H_

namespace kvs::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const char* message);
}  // namespace kvs::internal

#define KVS_CHECK(condition)                                            \
  do {                                                                  \
    if (__builtin_expect(!(condition), 0)) {                            \
      ::kvs::internal::CheckFailed(__FILE__, __LINE__, #condition, ""); \
    }                                                                   \
  } while (false)

#define KVS_CHECK_MSG(condition, message)                                      \
  do {                                                                         \
    if (__builtin_expect(!(condition), 0)) {                                   \
      ::kvs::internal::CheckFailed(__FILE__, __LINE__, #condition, (message)); \
    }                                                                          \
  } while (false)

#endif  // KVS_UTIL_CHECK_H_
