// Shard: one thread running an event loop to completion (docs/ARCHITECTURE.md
// "Server threads"): it waits in epoll for its descriptors, calls each ready
// one's handler, runs the tasks other threads posted to it, the timers that
// fell due, and last the work deferred to the end of the turn (a
// connection's one send per batch of replies). A handler runs its request
// to the end on this thread; nothing on it sleeps or waits for another
// thread. An idle shard blocks in epoll_wait: no spinning, no naps, no
// bound that a missed wake-up waits out (a post writes the shard's eventfd
// unless a wake-up is pending already).
//
// Bounds: Post never refuses -- what is posted is bounded by its posters
// (a client door posts only the replies of requests it let in, at most its
// in-flight bound per connection).
//
// Liveness (Probe): the server's watchdog asks each shard, once a second,
// whether it ran the probe posted the time before; a shard stuck in a turn,
// or asleep through its wake-up, answers no more, and the server stops
// (docs/ARCHITECTURE.md "Watchdog").
//
// Thread safety: Post from any thread; Probe from one thread at a time;
// everything else on the shard's own thread (Current() == this), or before
// Start.

#ifndef KVS_SHARD_SHARD_H_
#define KVS_SHARD_SHARD_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "util/status.h"

namespace kvs::shard {

class Shard {
 public:
  // What the loop calls when a watched descriptor is ready.
  class Handler {
   public:
    virtual ~Handler() = default;
    // `events`: the epoll events that are ready (EPOLLIN, EPOLLOUT, ...).
    virtual void OnReady(uint32_t events) = 0;
  };
  using Task = std::function<void()>;
  using Clock = std::chrono::steady_clock;

  // Shard `index` (its thread is named kvs-shard-<index>); Start runs it.
  explicit Shard(size_t index);
  // Stops the loop and joins; tasks posted and not run are dropped (their
  // captures released on this thread).
  ~Shard();
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  Status Start();
  size_t index() const { return index_; }

  // The shard whose thread calls, or null on any other thread.
  static Shard* Current();
  bool OnShard() const { return Current() == this; }

  // On the shard: watches `fd` for `events` (0: registered, reporting only
  // hang-ups and errors), calling `handler`; again to change the events,
  // or, with EPOLLONESHOT, to arm it again after it fired.
  // The shard holds `handler` until Unwatch.
  void Watch(int fd, uint32_t events, std::shared_ptr<Handler> handler);
  void Unwatch(int fd);
  // On the shard: runs `task` at the end of this turn (after every ready
  // descriptor, post and timer), before it waits again.
  void Defer(Task task);
  // On the shard: runs `task` on it at `deadline` or soon after.
  void At(Clock::time_point deadline, Task task);

  // From any thread: runs `task` on the shard soon.
  void Post(Task task);

  // Whether the shard ran the probe the previous call posted (true on the
  // first call); if it did, posts the next one. At most one probe is ever
  // queued.
  bool Probe();

  // Turns the loop has taken, and how often it blocked (monitoring).
  uint64_t turns() const { return turns_.load(std::memory_order_relaxed); }
  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

 private:
  void Loop();
  int WaitMillis() const;
  void RunPosted();
  void RunDue();
  void RunDeferred();

  const size_t index_;
  int poll_set_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> running_{false};
  std::thread thread_;
  std::atomic<uint64_t> turns_{0}, wakeups_{0};
  // Probes posted, and the last one the shard ran.
  std::atomic<uint64_t> probes_posted_{0}, probes_run_{0};

  std::mutex posted_mutex_;
  std::vector<Task> posted_;   // under posted_mutex_
  bool wake_pending_ = false;  // under posted_mutex_: the eventfd was written

  // The shard's own.
  struct Watched {
    uint32_t events = 0;
    std::shared_ptr<Handler> handler;
  };
  std::unordered_map<int, Watched> watched_;
  std::multimap<Clock::time_point, Task> timers_;
  std::vector<Task> deferred_;
};

}  // namespace kvs::shard

#endif  // KVS_SHARD_SHARD_H_
