#include "channel/stream_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "channel/replica_sets.h"
#include "util/check.h"
#include "util/thread_name.h"

namespace kvs::channel {

// One stream connection: the loop reads it; anyone with a reply writes it.
struct StreamConnection final : Session {
  int socket = -1;
  ConnectionKind peer_kind = ConnectionKind::kClient;
  uint64_t number = 0;
  std::shared_ptr<std::atomic<size_t>> live;
  ReplicaSets replica_sets;
  std::atomic<uint64_t> next_key{1};
  std::atomic<size_t> in_flight{0};

  // The loop's.
  std::string in;        // bytes of frames not yet whole
  uint64_t written = 0;  // the last WRITE applied
  uint32_t watched = 0;  // the epoll events it is watched for

  // Whoever sends, under `out_mutex`.
  std::mutex out_mutex;
  std::string out;
  size_t out_sent = 0;
  bool closed = false;
  std::atomic<size_t> out_bytes{0};  // what `out` holds unsent

  ~StreamConnection() override {
    if (socket >= 0) ::close(socket);
  }

  ConnectionKind kind() const override { return peer_kind; }
  uint64_t id() const override { return number; }

  Status ReplicaBuffers(
      uint64_t tag, size_t count, size_t bytes,
      std::vector<std::shared_ptr<ReplicaBuffer>>* buffers) override {
    {
      std::lock_guard<std::mutex> lock(out_mutex);
      if (closed) return Status::Closed("the connection closed");
    }
    return replica_sets.Get(
        tag, count, bytes,
        [&](std::shared_ptr<ReplicaBuffer>* buffer) {
          return ReplicaBuffer::Allocate(bytes, next_key.fetch_add(1), live,
                                         buffer);
        },
        buffers);
  }

  // Queues `frame` and sends what the socket takes now (never blocks);
  // whether output still waits for the loop.
  bool Send(std::string_view frame) {
    std::lock_guard<std::mutex> lock(out_mutex);
    if (closed) return false;
    const bool idle = out_sent == out.size();
    out.append(frame);
    if (!idle) {
      out_bytes.store(out.size() - out_sent);
      return true;  // the loop is on it
    }
    return FlushLocked();
  }

  // Sends what the socket takes; whether output still waits.
  bool FlushLocked() {
    while (out_sent < out.size()) {
      const ssize_t n = ::send(socket, out.data() + out_sent,
                               out.size() - out_sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // full (or failing: the loop finds out reading)
      out_sent += static_cast<size_t>(n);
    }
    if (out_sent == out.size()) {
      out.clear();
      out_sent = 0;
    } else if (out_sent > (1u << 20)) {
      out.erase(0, out_sent);
      out_sent = 0;
    }
    out_bytes.store(out.size() - out_sent);
    return out_sent < out.size();
  }
};

Status StreamServer::Start(RequestHandler* handler, size_t workers,
                           std::shared_ptr<std::atomic<size_t>> replica_buffers,
                           Counters counters,
                           std::unique_ptr<StreamServer>* server) {
  std::unique_ptr<StreamServer> started(new StreamServer());
  started->handler_ = handler;
  started->replica_buffers_ = std::move(replica_buffers);
  started->counters_ = counters;
  started->poll_set_ = ::epoll_create1(EPOLL_CLOEXEC);
  started->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (started->poll_set_ < 0 || started->wake_fd_ < 0) {
    return Status::FromErrno("stream: epoll/eventfd", errno);
  }
  struct epoll_event watch {};
  watch.events = EPOLLIN;
  watch.data.fd = started->wake_fd_;
  ::epoll_ctl(started->poll_set_, EPOLL_CTL_ADD, started->wake_fd_, &watch);
  started->workers_ = std::make_unique<ThreadPool>(
      static_cast<unsigned>(std::max<size_t>(1, workers)), kThreadStreamWorker);
  started->control_ = std::make_unique<ThreadPool>(1, kThreadStreamControl);
  StreamServer* raw = started.get();
  started->loop_ = std::thread([raw] {
    SetThreadName(kThreadStreamLoop);
    raw->Loop();
  });
  *server = std::move(started);
  return Status::Ok();
}

StreamServer::~StreamServer() {
  running_.store(false);
  Wake();
  if (loop_.joinable()) loop_.join();
  // Replies still to come from the handler's threads use the connections
  // (kept alive by their callbacks) but not this object's threads; the
  // handler bounds how long a request waits.
  control_.reset();
  workers_.reset();
  const auto answered_by =
      std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (answering_.load(std::memory_order_acquire) > 0) {
    KVS_CHECK(std::chrono::steady_clock::now() < answered_by);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& [fd, connection] : connections_) {
    ::shutdown(connection->socket, SHUT_RDWR);
    connection->replica_sets.Clear();
  }
  connections_.clear();
  added_.clear();
  if (poll_set_ >= 0) ::close(poll_set_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void StreamServer::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
}

bool StreamServer::Probe() {
  const uint64_t asked = probes_asked_.load(std::memory_order_relaxed);
  if (probes_answered_.load(std::memory_order_acquire) != asked) return false;
  // Stored before the wake-up: the turn it causes reads it.
  probes_asked_.store(asked + 1, std::memory_order_release);
  Wake();
  return true;
}

void StreamServer::Add(int socket, ConnectionKind kind, uint64_t id) {
  auto connection = std::make_shared<StreamConnection>();
  connection->socket = socket;
  connection->peer_kind = kind;
  connection->number = id;
  connection->live = replica_buffers_;
  const int flags = ::fcntl(socket, F_GETFL, 0);
  const int one = 1;
  (void)::fcntl(socket, F_SETFL, flags | O_NONBLOCK);
  (void)::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    added_.push_back(std::move(connection));
  }
  Wake();
}

void StreamServer::Watch(StreamConnection& connection) {
  const bool held = connection.in_flight.load() >= kInFlightMax ||
                    connection.out_bytes.load() > kOutputMax;
  const bool resume = connection.in_flight.load() < kInFlightMax / 2 &&
                      connection.out_bytes.load() < kOutputMax / 2;
  uint32_t events = connection.watched & EPOLLIN;
  if (held) events = 0;
  if (resume) events = EPOLLIN;
  if (connection.out_bytes.load() > 0) events |= EPOLLOUT;
  events |= EPOLLRDHUP;
  if (events == connection.watched) return;
  struct epoll_event watch {};
  watch.events = events;
  watch.data.fd = connection.socket;
  ::epoll_ctl(poll_set_,
              connection.watched == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD,
              connection.socket, &watch);
  connection.watched = events;
}

void StreamServer::Loop() {
  std::vector<struct epoll_event> events(64);
  while (running_.load(std::memory_order_acquire)) {
    // Held-back connections are looked at again within 10 ms (their
    // replies drain without waking the loop).
    bool holding = false;
    for (const auto& [fd, connection] : connections_) {
      holding |= (connection->watched & EPOLLIN) == 0;
    }
    const int ready =
        ::epoll_wait(poll_set_, events.data(), static_cast<int>(events.size()),
                     holding ? 10 : -1);
    probes_answered_.store(probes_asked_.load(std::memory_order_acquire),
                           std::memory_order_release);
    if (ready < 0 && errno != EINTR) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    std::vector<std::shared_ptr<StreamConnection>> added, rewatch;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      added.swap(added_);
      rewatch.swap(rewatch_);
    }
    for (auto& connection : added) {
      Watch(*connection);
      connections_[connection->socket] = std::move(connection);
    }
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        uint64_t drained;
        (void)!::read(wake_fd_, &drained, sizeof drained);
        continue;
      }
      const auto it = connections_.find(fd);
      if (it == connections_.end()) continue;
      const std::shared_ptr<StreamConnection> connection = it->second;
      if ((events[i].events & EPOLLOUT) != 0) {
        std::lock_guard<std::mutex> lock(connection->out_mutex);
        connection->FlushLocked();
      }
      if ((events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) !=
              0 &&
          !Read(connection)) {
        Close(connection);
        continue;
      }
      Watch(*connection);
    }
    for (const auto& connection : rewatch) {
      if (connections_.count(connection->socket) != 0) Watch(*connection);
    }
    if (holding) {
      for (const auto& [fd, connection] : connections_) Watch(*connection);
    }
  }
}

bool StreamServer::Read(const std::shared_ptr<StreamConnection>& shared) {
  StreamConnection& connection = *shared;
  // A bounded amount per turn, so one busy peer does not starve the rest.
  size_t taken = 0;
  char chunk[256 << 10];
  while (taken < (4u << 20)) {
    const ssize_t n = ::recv(connection.socket, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return false;  // closed or failed
    connection.in.append(chunk, static_cast<size_t>(n));
    taken += static_cast<size_t>(n);
    if (static_cast<size_t>(n) < sizeof chunk) break;
  }
  const uint64_t written_before = connection.written;
  size_t at = 0;
  while (connection.in.size() - at >= kFrameHeaderBytes) {
    FrameHeader header;
    if (!DecodeFrameHeader(std::string_view(connection.in).substr(at),
                           /*server=*/true, &header)
             .ok()) {
      counters_.malformed->fetch_add(1);
      return false;
    }
    if (connection.in.size() - at < kFrameHeaderBytes + header.payload_bytes) {
      break;
    }
    const std::string_view payload =
        std::string_view(connection.in)
            .substr(at + kFrameHeaderBytes, header.payload_bytes);
    at += kFrameHeaderBytes + header.payload_bytes;
    if (header.type == FrameType::kMessage) {
      counters_.requests->fetch_add(1);
      Dispatch(shared, header.id, std::string(payload));
    } else if (!Apply(connection, header, payload)) {
      counters_.malformed->fetch_add(1);
      return false;
    }
  }
  connection.in.erase(0, at);
  if (connection.written != written_before) {
    std::string frame;
    AppendFrame(FrameType::kWritten, connection.written, {}, &frame);
    connection.Send(frame);
  }
  return true;
}

bool StreamServer::Apply(StreamConnection& connection,
                         const FrameHeader& header, std::string_view payload) {
  uint64_t key = 0, offset = 0;
  std::string_view bytes;
  if (!DecodeWrite(payload, &key, &offset, &bytes).ok()) return false;
  const std::shared_ptr<ReplicaBuffer> buffer =
      connection.replica_sets.Find(key);
  if (buffer == nullptr || offset > buffer->size() ||
      bytes.size() > buffer->size() - offset) {
    return false;  // not a buffer it was given, or outside it
  }
  std::memcpy(buffer->data() + offset, bytes.data(), bytes.size());
  connection.written = header.id;
  return true;
}

void StreamServer::Dispatch(const std::shared_ptr<StreamConnection>& connection,
                            uint64_t request_id, std::string request) {
  connection->in_flight.fetch_add(1);
  answering_.fetch_add(1);
  // Only a peer's connection carries replication control (a client's bytes
  // are a client request whatever they look like).
  const bool control = connection->peer_kind == ConnectionKind::kPeer &&
                       handler_->IsControl(request);
  ThreadPool* pool = control ? control_.get() : workers_.get();
  pool->Submit(
      [this, connection, request_id, request = std::move(request)]() mutable {
        handler_->HandleAsync(
            connection.get(), request,
            [this, connection, request_id](std::string reply) {
              std::string frame;
              AppendFrame(FrameType::kReply, request_id, reply, &frame);
              const bool waits = connection->Send(frame);
              const size_t left = connection->in_flight.fetch_sub(1) - 1;
              if (waits || left == kInFlightMax / 2) {
                std::lock_guard<std::mutex> lock(mutex_);
                rewatch_.push_back(connection);
              }
              if (waits || left == kInFlightMax / 2) Wake();
              answering_.fetch_sub(1, std::memory_order_release);
            });
      });
}

void StreamServer::Close(const std::shared_ptr<StreamConnection>& connection) {
  ::epoll_ctl(poll_set_, EPOLL_CTL_DEL, connection->socket, nullptr);
  {
    std::lock_guard<std::mutex> lock(connection->out_mutex);
    connection->closed = true;
  }
  ::shutdown(connection->socket, SHUT_RDWR);
  // The peer writes no more: its buffers go (sinks holding one keep it).
  connection->replica_sets.Clear();
  connections_.erase(connection->socket);
  counters_.closed->fetch_add(1);
  counters_.open->fetch_sub(1);
}

}  // namespace kvs::channel
