#include "door/client_door.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "channel/bootstrap.h"
#include "util/check.h"

namespace kvs::door {
namespace {

// How long the destructor waits for replies still to come (beyond the
// replication timeout, which bounds them) before it gives up on the process.
constexpr auto kCloseWait = std::chrono::minutes(1);
// Connections accepted in one turn at most.
constexpr int kAcceptsPerTurn = 64;
// Out of descriptors: the listener rests this long before accepting again.
constexpr auto kDescriptorRest = std::chrono::milliseconds(100);

std::string PeerName(const struct sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    port = ntohs(v6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

// Runs `task` on `shard` and waits for it.
void RunOn(shard::Shard* shard, std::function<void()> task) {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  shard->Post([&] {
    task();
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    done_cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(mutex);
  done_cv.wait(lock, [&] { return done; });
}

}  // namespace

// Accepts on shard 0 and deals connections to the shards in turn.
class ClientDoor::Acceptor final : public shard::Shard::Handler {
 public:
  Acceptor(ClientDoor* door, int listener) : door_(door), listener_(listener) {}

  void OnReady(uint32_t) override {
    for (int i = 0; i < kAcceptsPerTurn; ++i) {
      struct sockaddr_storage address {};
      socklen_t length = sizeof address;
      const int socket =
          ::accept4(listener_, reinterpret_cast<struct sockaddr*>(&address),
                    &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (socket < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
            errno == ENOMEM) {
          Rest();
        }
        return;  // EAGAIN: none left; others (a connection reset): next turn
      }
      Admit(socket, PeerName(address));
    }
  }

  // Stops accepting (on shard 0).
  void Stop() {
    stopped_ = true;
    door_->shards_[0]->Unwatch(listener_);
  }

 private:
  void Admit(int socket, std::string peer) {
    DoorCounters& counters = door_->context_.counters;
    if (counters.connections.load() >=
        door_->context_.options.max_connections) {
      // Counted before it closes: whoever sees it closed sees it counted.
      const uint64_t count = counters.refused_connections.fetch_add(1) + 1;
      ::close(socket);
      if ((count & (count - 1)) == 0) {  // the 1st, 2nd, 4th...: bounded
        std::fprintf(stderr,
                     "WARN kvs client door: refused a client connection from "
                     "%s: %zu are open, the most allowed (%llu refused so "
                     "far)\n",
                     peer.c_str(), door_->context_.options.max_connections,
                     static_cast<unsigned long long>(count));
      }
      return;
    }
    counters.connections.fetch_add(1);
    const int one = 1;
    (void)::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    shard::Shard* shard = door_->shards_[next_++ % door_->shards_.size()].get();
    auto connection = std::make_shared<ClientConnection>(
        &door_->context_, shard, socket, std::move(peer));
    if (shard->OnShard()) {
      connection->Begin();
    } else {
      shard->Post([connection] { connection->Begin(); });
    }
  }

  // Out of descriptors (or memory): level-triggered, the listener would
  // fire at once again; it rests instead, and the queue waits in the
  // kernel's backlog.
  void Rest() {
    shard::Shard* shard = door_->shards_[0].get();
    shard->Watch(listener_, 0, nullptr);
    shard->At(shard::Shard::Clock::now() + kDescriptorRest, [this, shard] {
      if (!stopped_) shard->Watch(listener_, EPOLLIN, nullptr);
    });
  }

  ClientDoor* const door_;
  const int listener_;
  size_t next_ = 0;
  bool stopped_ = false;
};

Status ClientDoor::Start(channel::RequestHandler* handler,
                         const ClientDoorOptions& options,
                         std::unique_ptr<ClientDoor>* door) {
  if (options.shards == 0 || options.shards > 256) {
    return Status::InvalidArgument("shards must be 1..256");
  }
  if (options.max_connections == 0 || options.max_in_flight == 0) {
    return Status::InvalidArgument(
        "max_connections and max_in_flight must be at least 1");
  }
  KVS_RETURN_IF_ERROR(channel::CheckSecret(options.client_secret));
  std::unique_ptr<ClientDoor> started(new ClientDoor());
  started->context_.handler = handler;
  started->context_.options = options;
  if (options.tls.enabled()) {
    KVS_RETURN_IF_ERROR(
        TlsContext::Create(options.tls, &started->context_.tls));
  }
  KVS_RETURN_IF_ERROR(channel::Listen(options.host, options.port,
                                      &started->listener_, &started->port_));
  for (size_t i = 0; i < options.shards; ++i) {
    started->shards_.push_back(std::make_unique<shard::Shard>(i));
    started->context_.watchers.push_back(std::make_shared<AnswerWatcher>(
        started->shards_.back().get(), handler));
    KVS_RETURN_IF_ERROR(started->shards_.back()->Start());
  }
  started->acceptor_ =
      std::make_shared<Acceptor>(started.get(), started->listener_);
  ClientDoor* raw = started.get();
  RunOn(raw->shards_[0].get(), [raw] {
    raw->shards_[0]->Watch(raw->listener_, EPOLLIN, raw->acceptor_);
  });
  *door = std::move(started);
  return Status::Ok();
}

ClientDoor::~ClientDoor() {
  if (!shards_.empty() && acceptor_ != nullptr) {
    RunOn(shards_[0].get(), [this] { acceptor_->Stop(); });
  }
  if (listener_ >= 0) ::close(listener_);
  // The replies still to come are written while the shards run on; the
  // handler bounds how long one takes (the replication timeout).
  const auto deadline = std::chrono::steady_clock::now() + kCloseWait;
  while (context_.counters.answering.load(std::memory_order_acquire) > 0) {
    KVS_CHECK(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Each shard closes its connections as it stops (they are its handlers).
  shards_.clear();
}

ClientDoorStats ClientDoor::stats() const {
  const DoorCounters& counters = context_.counters;
  ClientDoorStats stats;
  stats.requests = counters.requests.load();
  stats.connections = counters.connections.load();
  stats.refused_connections = counters.refused_connections.load();
  stats.refusals = counters.refusals.load();
  stats.output_stalls = counters.output_stalls.load();
  stats.malformed = counters.malformed.load();
  for (const auto& shard : shards_) {
    stats.shard_turns += shard->turns();
    stats.shard_wakeups += shard->wakeups();
  }
  return stats;
}

std::vector<bool> ClientDoor::Probe() {
  std::vector<bool> answered;
  answered.reserve(shards_.size());
  for (const auto& shard : shards_) answered.push_back(shard->Probe());
  return answered;
}

}  // namespace kvs::door
