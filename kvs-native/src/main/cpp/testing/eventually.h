// Waits for a condition the code under test makes true on its own threads:
// polled every 2 ms for at most 10 s (a test's bound, not a sleep to
// synchronise by).

#ifndef KVS_TESTING_EVENTUALLY_H_
#define KVS_TESTING_EVENTUALLY_H_

#include <chrono>
#include <thread>

namespace kvs::testing {

template <typename Condition>
bool Eventually(Condition condition) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace kvs::testing

#endif  // KVS_TESTING_EVENTUALLY_H_
