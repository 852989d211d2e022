// A fixed pool of threads running queued tasks in FIFO order: the engine's
// bounded compaction pool. The queue holds at most one compaction per region
// (regions schedule one at a time), so it needs no bound of its own.
//
// Thread safety: Submit may be called from any thread, including pool
// threads. The destructor finishes queued tasks, then joins.

#ifndef KVS_UTIL_THREAD_POOL_H_
#define KVS_UTIL_THREAD_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kvs {

class ThreadPool {
 public:
  // `name`: the threads' name (util/thread_name.h); empty: inherited.
  explicit ThreadPool(unsigned threads, std::string name = "");
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> task);

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable wakeup_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  const std::string name_;
  std::vector<std::thread> threads_;
};

}  // namespace kvs

#endif  // KVS_UTIL_THREAD_POOL_H_
