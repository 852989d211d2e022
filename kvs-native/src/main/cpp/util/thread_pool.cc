#include "util/thread_pool.h"

#include <utility>

#include "util/check.h"
#include "util/thread_name.h"

namespace kvs {

ThreadPool::ThreadPool(unsigned threads, std::string name)
    : name_(std::move(name)) {
  KVS_CHECK(threads > 0);
  for (unsigned i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      if (!name_.empty()) SetThreadName(name_.c_str());
      Run();
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  for (auto& thread : threads_) {
    thread.join();
  }
}

void ThreadPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    KVS_CHECK_MSG(!stopping_, "task submitted to a stopping pool");
    queue_.push_back(std::move(task));
  }
  wakeup_.notify_one();
}

void ThreadPool::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wakeup_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      return;  // stopping, and everything queued has run
    }
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace kvs
