// L0Budget: the share of the engine's memory budget that every region's
// L0s (active and immutable) must fit in together.
//
// Regions account their L0 memory as it grows (arena blocks) and release it
// when a compaction drops an immutable L0. A writer that finds the budget
// exceeded switches its own L0 if it can, and otherwise waits (a counted
// stall) until some compaction releases memory.
//
// Thread safety: all methods may be called concurrently.

#ifndef KVS_LSM_L0_BUDGET_H_
#define KVS_LSM_L0_BUDGET_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kvs::lsm {

class L0Budget {
 public:
  explicit L0Budget(uint64_t limit_bytes) : limit_bytes_(limit_bytes) {}

  void Add(uint64_t bytes) {
    used_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void Release(uint64_t bytes) {
    used_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    released_.notify_all();
  }
  bool Exceeded() const {
    return used_bytes_.load(std::memory_order_relaxed) > limit_bytes_;
  }
  // Waits until the budget is no longer exceeded or `deadline` passes;
  // returns whether it is within budget.
  bool WaitUntilWithin(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    return released_.wait_until(lock, deadline, [this] { return !Exceeded(); });
  }
  uint64_t used_bytes() const {
    return used_bytes_.load(std::memory_order_relaxed);
  }
  uint64_t limit_bytes() const { return limit_bytes_; }

 private:
  const uint64_t limit_bytes_;
  std::atomic<uint64_t> used_bytes_{0};
  std::mutex mutex_;
  std::condition_variable released_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_L0_BUDGET_H_
