#include "shard/shard.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "util/check.h"
#include "util/thread_name.h"

namespace kvs::shard {
namespace {

thread_local Shard* current_shard = nullptr;

}  // namespace

Shard::Shard(size_t index) : index_(index) {}

Shard::~Shard() {
  if (running_.exchange(false)) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  watched_.clear();
  timers_.clear();
  deferred_.clear();
  posted_.clear();
  if (poll_set_ >= 0) ::close(poll_set_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status Shard::Start() {
  poll_set_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (poll_set_ < 0) return Status::FromErrno("shard: epoll_create1", errno);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Status::FromErrno("shard: eventfd", errno);
  struct epoll_event watch {};
  watch.events = EPOLLIN;
  watch.data.fd = wake_fd_;
  if (::epoll_ctl(poll_set_, EPOLL_CTL_ADD, wake_fd_, &watch) != 0) {
    return Status::FromErrno("shard: epoll_ctl", errno);
  }
  running_.store(true);
  thread_ = std::thread([this] {
    const std::string name = std::string(kThreadShard) + std::to_string(index_);
    SetThreadName(name.c_str());
    current_shard = this;
    Loop();
    current_shard = nullptr;
  });
  return Status::Ok();
}

Shard* Shard::Current() { return current_shard; }

void Shard::Watch(int fd, uint32_t events, std::shared_ptr<Handler> handler) {
  auto it = watched_.find(fd);
  struct epoll_event watch {};
  watch.events = events;
  watch.data.fd = fd;
  if (it == watched_.end()) {
    KVS_CHECK(handler != nullptr);
    KVS_CHECK(::epoll_ctl(poll_set_, EPOLL_CTL_ADD, fd, &watch) == 0);
    watched_[fd] = Watched{events, std::move(handler)};
    return;
  }
  if (it->second.events != events || (events & EPOLLONESHOT) != 0) {
    KVS_CHECK(::epoll_ctl(poll_set_, EPOLL_CTL_MOD, fd, &watch) == 0);
    it->second.events = events;
  }
  if (handler != nullptr) it->second.handler = std::move(handler);
}

void Shard::Unwatch(int fd) {
  if (watched_.erase(fd) != 0) {
    (void)::epoll_ctl(poll_set_, EPOLL_CTL_DEL, fd, nullptr);
  }
}

void Shard::Defer(Task task) { deferred_.push_back(std::move(task)); }

void Shard::At(Clock::time_point deadline, Task task) {
  timers_.emplace(deadline, std::move(task));
}

void Shard::Post(Task task) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(posted_mutex_);
    posted_.push_back(std::move(task));
    wake = !wake_pending_;
    wake_pending_ = true;
  }
  if (wake) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
}

bool Shard::Probe() {
  const uint64_t posted = probes_posted_.load(std::memory_order_relaxed);
  if (probes_run_.load(std::memory_order_acquire) != posted) return false;
  probes_posted_.store(posted + 1, std::memory_order_relaxed);
  Post([this, probe = posted + 1] {
    probes_run_.store(probe, std::memory_order_release);
  });
  return true;
}

int Shard::WaitMillis() const {
  if (!deferred_.empty()) return 0;
  if (timers_.empty()) return -1;
  const auto left = timers_.begin()->first - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  // Rounded up: a timer never fires early for want of a millisecond.
  return static_cast<int>(
      std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

void Shard::Loop() {
  std::vector<struct epoll_event> events(256);
  while (running_.load(std::memory_order_acquire)) {
    const int wait = WaitMillis();
    if (wait != 0) wakeups_.fetch_add(1, std::memory_order_relaxed);
    const int ready = ::epoll_wait(poll_set_, events.data(),
                                   static_cast<int>(events.size()), wait);
    KVS_CHECK(ready >= 0 || errno == EINTR);
    turns_.fetch_add(1, std::memory_order_relaxed);
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        uint64_t drained;
        (void)!::read(wake_fd_, &drained, sizeof drained);
        continue;
      }
      const auto it = watched_.find(fd);
      if (it == watched_.end()) continue;  // unwatched earlier this turn
      // Held while it runs: it may unwatch itself.
      const std::shared_ptr<Handler> handler = it->second.handler;
      handler->OnReady(events[i].events);
    }
    RunPosted();
    RunDue();
    RunDeferred();
  }
}

void Shard::RunPosted() {
  std::vector<Task> posted;
  {
    std::lock_guard<std::mutex> lock(posted_mutex_);
    posted.swap(posted_);
    wake_pending_ = false;
  }
  for (Task& task : posted) task();
}

void Shard::RunDue() {
  const Clock::time_point now = Clock::now();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    Task task = std::move(timers_.begin()->second);
    timers_.erase(timers_.begin());
    task();
  }
}

void Shard::RunDeferred() {
  // Deferred work may defer more (a flush that lets held requests run,
  // which answer at once): run until none is left.
  while (!deferred_.empty()) {
    std::vector<Task> deferred;
    deferred.swap(deferred_);
    for (Task& task : deferred) task();
  }
}

}  // namespace kvs::shard
