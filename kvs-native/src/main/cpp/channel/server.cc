#include "channel/server.h"

#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "channel/bootstrap.h"
#include "channel/message_format.h"
#include "channel/replica_sets.h"
#include "channel/stream_server.h"
#include "io/aligned_buffer.h"
#include "util/check.h"
#include "util/thread_name.h"

namespace kvs::channel {
namespace {

using Clock = std::chrono::steady_clock;

// One client: its request buffer (written by the client), a staging mirror
// of its reply buffer (where replies are built before being written to the
// same offset of the client's buffer), and the polling state.
struct Connection : Session {
  uint64_t number = 0;  // id()
  ConnectionKind peer_kind = ConnectionKind::kClient;
  int socket = -1;
  fi_addr_t peer = 0;
  // Its own endpoint: dropped (closing it) once the connection is let go,
  // while workers posting to it and replica buffers registered on it hold
  // their own references.
  std::shared_ptr<fabric::Endpoint> endpoint;
  std::shared_ptr<std::atomic<size_t>> replica_buffers;
  io::AlignedBuffer requests;
  std::unique_ptr<fabric::MemoryRegion> requests_region;
  io::AlignedBuffer staging;
  std::unique_ptr<fabric::MemoryRegion> staging_region;
  fabric::RemoteBuffer reply_buffer;
  // Spinning thread only.
  bool peer_closed = false;  // seen while taking knocks
  uint32_t rendezvous = 0;
  uint32_t sequence = 0;
  bool incomplete = false;
  Clock::time_point incomplete_since;
  // Replies sent in part, by request id: the whole reply.
  std::mutex parts_mutex;
  std::unordered_map<uint64_t, std::string> parts;
  // `closed` and `writes` change together under `write_mutex`: once closed,
  // no write starts, so `writes` only falls and the departing client can be
  // let go when it reaches zero (its memory must outlive our writes to it).
  std::mutex write_mutex;
  std::atomic<bool> closed{false};
  std::atomic<int> writes{0};
  Clock::time_point closing_since;
  // The replica buffer sets the peer asked for, by tag (Session::
  // ReplicaBuffers): kept until the connection goes.
  ReplicaSets replica_sets;

  // Marks the connection closed; false if it already was.
  bool MarkClosed() {
    std::lock_guard<std::mutex> lock(write_mutex);
    return !closed.exchange(true);
  }
  // Registers a write about to be posted and returns the endpoint to post
  // it on; null once closed.
  std::shared_ptr<fabric::Endpoint> BeginWrite() {
    std::lock_guard<std::mutex> lock(write_mutex);
    if (closed.load() || endpoint == nullptr) return nullptr;
    writes.fetch_add(1);
    return endpoint;
  }
  // Closes the endpoint (once its last user lets go), dropping the writes
  // still in flight to a peer that stopped driving them.
  void CloseEndpoint() {
    std::shared_ptr<fabric::Endpoint> closing;
    // The peer writes no more: its buffers go (users holding one keep its
    // memory, and with it the endpoint, until they let go).
    replica_sets.Clear();
    {
      std::lock_guard<std::mutex> lock(write_mutex);
      requests_region.reset();  // regions before their endpoint
      staging_region.reset();
      closing = std::move(endpoint);
    }
    // Outside the lock: freeing the dropped writes' callbacks takes it.
    closing.reset();
  }

  ConnectionKind kind() const override { return peer_kind; }
  uint64_t id() const override { return number; }

  Status ReplicaBuffers(
      uint64_t tag, size_t count, size_t bytes,
      std::vector<std::shared_ptr<ReplicaBuffer>>* buffers) override {
    std::shared_ptr<fabric::Endpoint> registering;
    {
      std::lock_guard<std::mutex> lock(write_mutex);
      registering = endpoint;
    }
    if (registering == nullptr) {
      return Status::Closed("the connection closed");
    }
    return replica_sets.Get(
        tag, count, bytes,
        [&](std::shared_ptr<ReplicaBuffer>* buffer) {
          return ReplicaBuffer::Register(registering, bytes, replica_buffers,
                                         buffer);
        },
        buffers);
  }

  ~Connection() override {
    // Regions before the buffers they cover and the endpoint they are on.
    replica_sets.Clear();
    requests_region.reset();
    staging_region.reset();
    endpoint.reset();
    if (socket >= 0) ::close(socket);
  }
};

struct Task {
  std::shared_ptr<Connection> connection;
  MessageHeader header;
  std::string_view payload;  // in the connection's request buffer
};

struct Worker {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Task> queue;
  std::atomic<size_t> queued{0};
  std::atomic<bool> sleeping{false};
  std::thread thread;
};

}  // namespace

struct Server::Impl {
  ServerOptions options;
  RequestHandler* handler = nullptr;
  int listen_socket = -1;
  uint16_t port = 0;
  // Where the spinning thread blocks when idle (ServerOptions::
  // spin_block_after): the connections' bootstrap sockets (knocks), their
  // endpoints' wait fds (arrivals, tcp) and `wake_fd` (a new connection,
  // the end).
  int poll_set = -1;
  int wake_fd = -1;
  std::atomic<bool> running{true};

  // Probe: asked by the watchdog, answered at the top of each round of the
  // spinning thread (the stream transport's loop answers its own).
  std::atomic<uint64_t> probes_asked{0};
  std::atomic<uint64_t> probes_answered{0};

  std::mutex incoming_mutex;
  std::condition_variable incoming_ready;  // the spinner waits on it when idle
  std::vector<std::shared_ptr<Connection>> incoming;
  std::vector<std::shared_ptr<Connection>> connections;  // spinner only
  // Closed, waiting for their last writes before the socket closes.
  std::vector<std::shared_ptr<Connection>> closing;  // spinner only
  std::atomic<uint64_t> next_connection_id{1};

  // Replica buffers alive: writes into them land unseen (no message), and
  // need this side's progress, so naps stay short while there are any.
  std::shared_ptr<std::atomic<size_t>> replica_buffers =
      std::make_shared<std::atomic<size_t>>(0);

  std::vector<std::unique_ptr<Worker>> workers;
  size_t current_worker = 0;  // spinner only

  // Provider "stream": the connections' loop (no spinner, no endpoints).
  std::unique_ptr<StreamServer> stream;

  std::thread acceptor, spinner;
  std::atomic<uint64_t> refused{0};  // failed authentication
  std::atomic<uint64_t> handshakes_dropped{0};
  std::atomic<uint64_t> accepted{0}, closed{0}, open{0}, requests{0},
      reply_parts{0}, malformed{0}, wakeups{0}, blocks{0};
  std::atomic<bool> blocked{false};
  // Requests handed to the handler and not answered yet (a replicated
  // write answers from the replication thread): the server outlives them.
  std::atomic<uint64_t> answering{0};

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(incoming_mutex);
      running.store(false);
      incoming_ready.notify_all();
    }
    Wake();
    if (acceptor.joinable()) acceptor.join();
    stream.reset();
    if (spinner.joinable()) spinner.join();
    for (auto& worker : workers) {
      {
        std::lock_guard<std::mutex> lock(worker->mutex);
        worker->wake.notify_all();
      }
      if (worker->thread.joinable()) worker->thread.join();
    }
    // Replies still to come from the handler's threads: their writes use
    // this server. The handler bounds how long a request waits (a write
    // waits for its backups within their timeout); past a minute it is
    // broken, and going on would be a use after free.
    const auto answered_by = Clock::now() + std::chrono::minutes(1);
    while (answering.load(std::memory_order_acquire) > 0) {
      KVS_CHECK(Clock::now() < answered_by);
      for (auto& connection : connections) connection->endpoint->Progress();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    // Let writes in flight finish (or fail) before their buffers go.
    for (auto& connection : connections) closing.push_back(connection);
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    for (bool writing = true; writing && Clock::now() < deadline;) {
      writing = false;
      for (auto& connection : closing) {
        if (connection->endpoint == nullptr) continue;
        connection->endpoint->Progress();
        writing |= connection->endpoint->outstanding() > 0;
      }
    }
    for (auto& worker : workers) worker->queue.clear();
    // Let the clients go now, whoever still holds a connection object.
    for (auto* group : {&closing, &incoming}) {
      for (auto& connection : *group) {
        ::shutdown(connection->socket, SHUT_RDWR);
        connection->CloseEndpoint();
      }
    }
    incoming.clear();
    connections.clear();
    closing.clear();
    if (listen_socket >= 0) ::close(listen_socket);
    if (poll_set >= 0) ::close(poll_set);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  void Wake() {
    const uint64_t one = 1;
    if (wake_fd >= 0) (void)!::write(wake_fd, &one, sizeof one);
  }

  bool Probe() {
    if (stream != nullptr) return stream->Probe();
    const uint64_t asked = probes_asked.load(std::memory_order_relaxed);
    if (probes_answered.load(std::memory_order_acquire) != asked) return false;
    {
      // Stored under the lock an idle spinner waits with, then woken
      // whichever way it waits.
      std::lock_guard<std::mutex> lock(incoming_mutex);
      probes_asked.store(asked + 1, std::memory_order_release);
    }
    incoming_ready.notify_all();
    Wake();
    return true;
  }

  // After posting a write: a blocked spinning thread must drive it (a
  // provider may send it, or take its acknowledgement, only in progress).
  void WakeIfBlocked() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (blocked.load()) Wake();
  }

  // --- Acceptor: bootstrap handshakes, off the spinning thread. ----------
  //
  // Every handshake in progress moves on as its socket is ready (non-
  // blocking), so one peer that is slow or silent holds up nobody: the
  // Challenge goes out, the Hello's bytes are gathered as they come, then
  // the Welcome goes out and the connection joins the spinning thread's.

  struct Handshake {
    std::shared_ptr<Connection> connection;
    Challenge challenge;
    std::string unsent;    // Challenge or Welcome bytes still to send
    std::string received;  // the Hello so far
    size_t hello_bytes = 0;
    bool welcomed = false;  // the Welcome is what `unsent` holds
    bool admitted = false;  // OK Welcome: hand over once it is sent
    Clock::time_point deadline;
  };

  void AcceptLoop() {
    std::list<Handshake> handshakes;  // oldest first
    std::vector<struct pollfd> fds;
    while (running.load(std::memory_order_acquire)) {
      fds.clear();
      fds.push_back({listen_socket, POLLIN, 0});
      auto wait_until = Clock::now() + std::chrono::milliseconds(50);
      for (const Handshake& handshake : handshakes) {
        fds.push_back(
            {handshake.connection->socket,
             static_cast<short>(handshake.unsent.empty() ? POLLIN : POLLOUT),
             0});
        wait_until = std::min(wait_until, handshake.deadline);
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
          wait_until - Clock::now());
      const int ready =
          ::poll(fds.data(), fds.size(),
                 static_cast<int>(std::max<int64_t>(0, wait.count()) + 1));
      if (ready < 0 && errno != EINTR) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      // Moved on first (the poll's answers are by position), then new ones.
      size_t position = 1;
      const auto now = Clock::now();
      for (auto it = handshakes.begin(); it != handshakes.end(); ++position) {
        const short events = position < fds.size() ? fds[position].revents : 0;
        bool done = false;
        if (events != 0) done = Step(&*it);
        if (!done && now >= it->deadline) {
          handshakes_dropped.fetch_add(1);  // too slow: just drop it
          done = true;
        }
        it = done ? handshakes.erase(it) : std::next(it);
      }
      if ((fds[0].revents & POLLIN) != 0) {
        // A bounded batch per turn: handshakes in progress move on too.
        for (int accepted_now = 0; accepted_now < 16; ++accepted_now) {
          const int socket = ::accept4(listen_socket, nullptr, nullptr,
                                       SOCK_CLOEXEC | SOCK_NONBLOCK);
          if (socket < 0) break;
          if (handshakes.size() >= options.handshakes_max) {
            handshakes_dropped.fetch_add(1);
            handshakes.pop_front();  // the oldest: nearest its deadline
          }
          handshakes.push_back(Begin(socket));
          if (Step(&handshakes.back())) handshakes.pop_back();
        }
      }
    }
  }

  Handshake Begin(int socket) {
    Handshake handshake;
    handshake.connection = std::make_shared<Connection>();
    handshake.connection->socket = socket;
    handshake.challenge.client_proof_required = !options.client_secret.empty();
    handshake.challenge.peer_proof_required = !options.secret.empty();
    handshake.challenge.nonce = RandomNonce();
    handshake.unsent = EncodeChallenge(handshake.challenge);
    handshake.deadline = Clock::now() + options.bootstrap_timeout;
    return handshake;
  }

  // Moves `handshake` on as far as its socket allows without waiting; true
  // once it is over (handed to the spinning thread, refused or failed).
  bool Step(Handshake* handshake) {
    const int socket = handshake->connection->socket;
    while (!handshake->unsent.empty()) {
      const ssize_t n = ::send(socket, handshake->unsent.data(),
                               handshake->unsent.size(), MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        handshakes_dropped.fetch_add(1);
        return true;
      }
      handshake->unsent.erase(0, static_cast<size_t>(n));
    }
    if (handshake->welcomed) {
      if (handshake->admitted) HandOver(std::move(handshake->connection));
      return true;
    }
    for (;;) {
      const size_t wanted =
          handshake->hello_bytes == 0
              ? kHelloHeadBytes - handshake->received.size()
              : handshake->hello_bytes - handshake->received.size();
      char bytes[512];
      const ssize_t n =
          ::recv(socket, bytes, std::min(wanted, sizeof bytes), 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        handshakes_dropped.fetch_add(1);  // closed or failed: not ours
        return true;
      }
      handshake->received.append(bytes, static_cast<size_t>(n));
      if (handshake->hello_bytes == 0 &&
          handshake->received.size() == kHelloHeadBytes &&
          !HelloBytes(handshake->received, &handshake->hello_bytes).ok()) {
        handshakes_dropped.fetch_add(1);  // not a client of ours
        return true;
      }
      if (handshake->hello_bytes != 0 &&
          handshake->received.size() == handshake->hello_bytes) {
        break;
      }
    }
    Hello hello;
    if (!DecodeHello(handshake->received, &hello).ok()) {
      handshakes_dropped.fetch_add(1);
      return true;
    }
    Welcome welcome;
    const std::string& secret = hello.kind == ConnectionKind::kPeer
                                    ? options.secret
                                    : options.client_secret;
    if (!secret.empty() &&
        !Verify(hello.proof, secret, HelloPurpose(hello.kind),
                handshake->challenge.nonce, hello.nonce)) {
      // Nothing opened or registered for it: it learns no address or key.
      refused.fetch_add(1);
      welcome.status = Status::InvalidArgument(
          hello.kind == ConnectionKind::kPeer
              ? "bootstrap authentication failed: the peer does not hold this "
                "cluster's secret (wrong or missing --secret-file)"
              : "bootstrap authentication failed: the client does not hold "
                "this cluster's client secret (wrong or missing "
                "--client-secret-file)");
    } else {
      handshake->connection->peer_kind = hello.kind;
      welcome.status = Admit(hello, handshake->connection.get(), &welcome);
      welcome.proof = Prove(secret, WelcomePurpose(hello.kind), hello.nonce,
                            handshake->challenge.nonce);
    }
    handshake->admitted = welcome.status.ok();
    handshake->welcomed = true;
    handshake->unsent = EncodeWelcome(welcome);
    return Step(handshake);
  }

  void HandOver(std::shared_ptr<Connection> connection) {
    accepted.fetch_add(1);
    open.fetch_add(1);
    if (stream != nullptr) {
      stream->Add(std::exchange(connection->socket, -1), connection->peer_kind,
                  connection->number);
      return;
    }
    std::lock_guard<std::mutex> lock(incoming_mutex);
    incoming.push_back(std::move(connection));
    incoming_ready.notify_one();
    Wake();
  }

  Status Admit(const Hello& hello, Connection* connection, Welcome* welcome) {
    if (hello.provider != options.endpoint.provider) {
      return Status::InvalidArgument(
          std::string("this server speaks ") +
          fabric::ProviderName(options.endpoint.provider) + ", not " +
          fabric::ProviderName(hello.provider));
    }
    if (open.load() >= options.max_connections) {
      return Status::FromCode(Status::Code::kOverloaded,
                              "too many connections");
    }
    if (stream != nullptr) {  // no endpoint, no buffers: the socket is all
      connection->number = next_connection_id.fetch_add(1);
      welcome->connection_id = connection->number;
      return Status::Ok();
    }
    const uint32_t request_bytes = hello.request_buffer_bytes;
    const uint64_t reply_bytes = hello.reply_buffer.size;
    if (request_bytes < kBufferBytesMin ||
        request_bytes > options.request_buffer_bytes_max ||
        request_bytes % kUnitBytes != 0 || reply_bytes < kBufferBytesMin ||
        reply_bytes > kBufferBytesMax || reply_bytes % kUnitBytes != 0) {
      return Status::InvalidArgument("buffer sizes outside the limits");
    }
    std::unique_ptr<fabric::Endpoint> opened;
    fabric::EndpointOptions endpoint_options = options.endpoint;
    endpoint_options.wait_fd = true;  // where the provider has one
    KVS_RETURN_IF_ERROR(fabric::Endpoint::Open(endpoint_options, &opened));
    const int socket = connection->socket;
    opened->SetPeerGoneCheck([socket] { return PeerClosed(socket); });
    std::shared_ptr<fabric::Endpoint> endpoint = std::move(opened);
    connection->endpoint = endpoint;  // outlives the regions on it
    KVS_RETURN_IF_ERROR(endpoint->AddPeer(hello.address, &connection->peer));
    connection->requests.Resize(request_bytes);
    std::memset(connection->requests.data(), 0, request_bytes);
    connection->staging.Resize(reply_bytes);
    KVS_RETURN_IF_ERROR(endpoint->Register(connection->requests.data(),
                                           request_bytes,
                                           &connection->requests_region));
    KVS_RETURN_IF_ERROR(endpoint->Register(
        connection->staging.data(), reply_bytes, &connection->staging_region));
    connection->reply_buffer = hello.reply_buffer;
    connection->replica_buffers = replica_buffers;
    connection->number = next_connection_id.fetch_add(1);
    welcome->address = endpoint->address();
    welcome->request_buffer = {connection->requests_region->RemoteAddress(0),
                               connection->requests_region->key(),
                               request_bytes};
    welcome->connection_id = connection->number;
    return Status::Ok();
  }

  // --- Spinning thread. --------------------------------------------------

  void SpinLoop() {
    // Short naps must be short: the default 50 us timer slack would
    // stretch a 20 us sleep to 70.
    ::prctl(PR_SET_TIMERSLACK, 1000, 0, 0, 0);
    auto idle_since = Clock::now();
    auto nap = options.spin_sleep;
    uint64_t rounds = 0;
    while (running.load(std::memory_order_acquire)) {
      probes_answered.store(probes_asked.load(std::memory_order_acquire),
                            std::memory_order_release);
      bool busy = false;
      {
        std::unique_lock<std::mutex> lock(incoming_mutex);
        if (connections.empty() && closing.empty() && incoming.empty()) {
          // Nothing to poll and no write in flight: block until a client
          // connects (or the watchdog asks, which the loop's top answers).
          incoming_ready.wait(lock, [&] {
            return !incoming.empty() ||
                   !running.load(std::memory_order_acquire) ||
                   probes_asked.load(std::memory_order_acquire) !=
                       probes_answered.load(std::memory_order_acquire);
          });
          idle_since = Clock::now();
        }
        for (auto& connection : incoming) {
          struct epoll_event watch {};
          watch.events = EPOLLIN | EPOLLRDHUP;
          watch.data.fd = connection->socket;
          ::epoll_ctl(poll_set, EPOLL_CTL_ADD, connection->socket, &watch);
          const int events = connection->endpoint->wait_fd();
          if (events >= 0) {
            struct epoll_event arrivals {};
            arrivals.events = EPOLLIN;
            arrivals.data.fd = events;
            ::epoll_ctl(poll_set, EPOLL_CTL_ADD, events, &arrivals);
          }
          connections.push_back(std::move(connection));
        }
        incoming.clear();
      }
      const bool check_liveness = ++rounds % 256 == 0;
      // Whether every connection wakes this thread itself (wait fds).
      bool woken_by_arrivals = !connections.empty();
      for (size_t i = 0; i < connections.size();) {
        Connection& connection = *connections[i];
        woken_by_arrivals &= connection.endpoint->wait_fd() >= 0;
        bool keep = true;
        busy |= connection.endpoint->Progress() > 0;
        busy |= PollConnection(connections[i], &keep);
        if (keep && (connection.peer_closed ||
                     (check_liveness && PeerClosed(connection.socket)))) {
          keep = false;
        }
        if (!keep) {
          Close(connections[i]);
          connections[i] = std::move(connections.back());
          connections.pop_back();
          continue;
        }
        ++i;
      }
      Release();
      const auto now = Clock::now();
      const auto block_after =
          woken_by_arrivals && options.event_block_after.count() > 0
              ? options.event_block_after
              : options.spin_block_after;
      if (busy) {
        idle_since = now;
        nap = options.spin_sleep;
      } else if (block_after.count() > 0 && now - idle_since > block_after &&
                 closing.empty() && !Writing()) {
        if (Block()) {  // knocked: a client is active
          idle_since = Clock::now();
          nap = options.spin_sleep;
        }
      } else if (options.spin_idle.count() > 0 &&
                 now - idle_since > options.spin_idle) {
        // Naps that double while nothing comes, up to spin_sleep_max: an
        // idle server costs little CPU, a busy one none of its latency.
        // Peers writing into replica buffers wait for our progress: keep
        // the naps at their shortest while there are any.
        std::this_thread::sleep_for(nap);
        const auto longest =
            replica_buffers->load(std::memory_order_relaxed) > 0
                ? options.spin_sleep
                : std::max(options.spin_sleep, options.spin_sleep_max);
        nap = std::min(nap * 2, longest);
      } else {
        // Spinning, but never in the way of a thread that has work: on a
        // machine with fewer cores than spinning threads (clients and
        // server on one host) that decides the latency.
        sched_yield();
      }
    }
  }

  // Whether writes this server posted are in flight (they need its
  // progress).
  bool Writing() const {
    for (const auto& connection : connections) {
      if (connection->endpoint->outstanding() > 0) return true;
    }
    return false;
  }

  // Takes the knocks waiting on every connection; whether there were any.
  bool TakeAllKnocks() {
    bool knocked = false;
    for (const auto& connection : connections) {
      const Knocks knocks = TakeKnocks(connection->socket);
      knocked |= knocks.knocked;
      connection->peer_closed |= knocks.closed;
    }
    return knocked;
  }

  // Blocks until a knock, a new connection or the end, at most
  // spin_block_max; returns whether a client knocked (or went away).
  bool Block() {
    if (TakeAllKnocks()) return true;  // came while we polled
    // A connection with a wait fd wakes us when its peer's bytes arrive,
    // unless some arrived already: then poll first.
    for (const auto& connection : connections) {
      if (connection->endpoint->wait_fd() >= 0 &&
          !connection->endpoint->TryWait()) {
        return true;
      }
    }
    struct pollfd ready {
      poll_set, POLLIN, 0
    };
    const auto most = options.spin_block_max;
    struct timespec timeout {
      static_cast<time_t>(most.count() / 1000),
          static_cast<long>(most.count() % 1000 * 1000000)
    };
    blocked.store(true);
    // A reply posted meanwhile (on a worker or the replication thread)
    // needs our progress; its poster wakes us only if it saw `blocked`
    // (WakeIfBlocked): one of the two sees the other.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (Writing()) {
      blocked.store(false);
      return true;
    }
    ::ppoll(&ready, 1, &timeout, nullptr);
    blocked.store(false);
    uint64_t woken;
    (void)!::read(wake_fd, &woken, sizeof woken);
    blocks.fetch_add(1);
    bool knocked = TakeAllKnocks();
    for (const auto& connection : connections) {
      knocked |= connection->peer_closed;
    }
    return knocked;
  }

  // Consumes every whole message at the connection's rendezvous point.
  // Returns whether it found any.
  bool PollConnection(const std::shared_ptr<Connection>& shared, bool* keep) {
    Connection& connection = *shared;
    bool found = false;
    if (connection.closed.load()) {  // a worker found it broken
      *keep = false;
      return found;
    }
    for (;;) {
      PollResult result;
      MessageHeader header;
      std::string_view payload;
      const uint32_t capacity =
          static_cast<uint32_t>(connection.requests.size());
      const Status status =
          PollMessage(connection.requests.data() + connection.rendezvous,
                      capacity - connection.rendezvous, connection.sequence,
                      &result, &header, &payload);
      if (!status.ok()) {
        malformed.fetch_add(1);
        *keep = false;
        return found;
      }
      if (result == PollResult::kNothing) {
        return found;
      }
      if (result == PollResult::kIncomplete) {
        const auto now = Clock::now();
        if (!connection.incomplete) {
          connection.incomplete = true;
          connection.incomplete_since = now;
        } else if (now - connection.incomplete_since >
                   options.incomplete_timeout) {
          malformed.fetch_add(1);  // a marker without a whole message
          *keep = false;
        }
        return found;
      }
      found = true;
      connection.incomplete = false;
      char* at = connection.requests.data() + connection.rendezvous;
      ClearMessage(at, header.message_bytes);
      ++connection.sequence;
      if (header.kind == MessageKind::kReset) {
        connection.rendezvous = 0;
        continue;
      }
      if ((header.kind != MessageKind::kRequest &&
           header.kind != MessageKind::kFetch) ||
          header.reply_capacity < 2 * kUnitBytes ||
          header.reply_capacity % kUnitBytes != 0 ||
          header.reply_offset % kUnitBytes != 0 ||
          uint64_t{header.reply_offset} + header.reply_capacity >
              connection.staging.size()) {
        malformed.fetch_add(1);
        *keep = false;
        return found;
      }
      connection.rendezvous += header.message_bytes;
      if (connection.rendezvous == capacity) connection.rendezvous = 0;
      requests.fetch_add(1);
      // Only a peer's connection carries replication control (a client's
      // bytes are a client request whatever they look like).
      if (connection.peer_kind == ConnectionKind::kPeer &&
          handler->IsControl(payload)) {
        Enqueue(workers.back().get(), Task{shared, header, payload});
      } else {
        Dispatch(Task{shared, header, payload});
      }
    }
  }

  // The seeds' policy: stay with the current worker below the threshold,
  // else the next running one below it, else wake a sleeping one.
  // (Over the request workers: the last worker serves control requests.)
  void Dispatch(Task task) {
    const size_t count = workers.size() - 1;
    size_t chosen = current_worker;
    if (workers[chosen]->queued.load() >= options.queue_threshold ||
        workers[chosen]->sleeping.load()) {
      bool picked = false;
      for (size_t step = 1; step <= count && !picked; ++step) {
        const size_t i = (current_worker + step) % count;
        if (!workers[i]->sleeping.load() &&
            workers[i]->queued.load() < options.queue_threshold) {
          chosen = i;
          picked = true;
        }
      }
      for (size_t step = 0; step < count && !picked; ++step) {
        const size_t i = (current_worker + step) % count;
        if (workers[i]->sleeping.load()) {
          chosen = i;
          picked = true;
        }
      }
      // All running and full: queue at the current one anyway (bounded by
      // the clients' buffers, which bound their outstanding requests).
    }
    current_worker = chosen;
    Enqueue(workers[chosen].get(), std::move(task));
  }

  void Enqueue(Worker* worker, Task task) {
    std::lock_guard<std::mutex> lock(worker->mutex);
    worker->queue.push_back(std::move(task));
    worker->queued.fetch_add(1);
    if (worker->sleeping.load()) {
      wakeups.fetch_add(1);
      worker->wake.notify_one();
    }
  }

  // Stops serving a connection. Its socket closes (letting the client go)
  // once the writes already posted to it completed, or after a grace period
  // for a client that stopped driving progress (it died).
  void Close(const std::shared_ptr<Connection>& connection) {
    ::epoll_ctl(poll_set, EPOLL_CTL_DEL, connection->socket, nullptr);
    if (connection->endpoint->wait_fd() >= 0) {
      ::epoll_ctl(poll_set, EPOLL_CTL_DEL, connection->endpoint->wait_fd(),
                  nullptr);
    }
    connection->MarkClosed();
    // A worker waiting to post to it gives up now.
    connection->endpoint->Abort();
    connection->closing_since = Clock::now();
    closing.push_back(connection);
    closed.fetch_add(1);
    open.fetch_sub(1);
  }

  void Release() {
    const auto now = Clock::now();
    for (size_t i = 0; i < closing.size();) {
      Connection& connection = *closing[i];
      connection.endpoint->Progress();
      if (connection.writes.load() == 0 ||
          now - connection.closing_since > options.incomplete_timeout) {
        ::shutdown(connection.socket, SHUT_RDWR);
        connection.CloseEndpoint();
        closing[i] = std::move(closing.back());
        closing.pop_back();
        continue;
      }
      ++i;
    }
  }

  // --- Workers. ----------------------------------------------------------

  void WorkLoop(Worker* worker) {
    std::string reply;
    while (running.load(std::memory_order_acquire)) {
      Task task;
      if (!TakeTask(worker, &task)) continue;
      Serve(task, &reply);
    }
  }

  bool TakeTask(Worker* worker, Task* task) {
    const auto spin_until = Clock::now() + options.worker_idle;
    while (worker->queued.load(std::memory_order_acquire) == 0) {
      if (!running.load()) return false;
      if (Clock::now() < spin_until) {
        sched_yield();
        continue;
      }
      std::unique_lock<std::mutex> lock(worker->mutex);
      worker->sleeping.store(true);
      worker->wake.wait_for(lock, std::chrono::milliseconds(100), [&] {
        return !worker->queue.empty() || !running.load();
      });
      worker->sleeping.store(false);
      break;
    }
    std::lock_guard<std::mutex> lock(worker->mutex);
    if (worker->queue.empty()) return false;
    *task = std::move(worker->queue.front());
    worker->queue.pop_front();
    worker->queued.fetch_sub(1);
    return true;
  }

  void Serve(const Task& task, std::string* reply) {
    Connection& connection = *task.connection;
    if (connection.closed.load()) return;
    if (task.header.kind == MessageKind::kFetch) {
      FetchPayload fetch;
      {
        std::lock_guard<std::mutex> lock(connection.parts_mutex);
        auto it = DecodeFetch(task.payload, &fetch)
                      ? connection.parts.find(fetch.request_id)
                      : connection.parts.end();
        if (it == connection.parts.end() || fetch.offset >= it->second.size()) {
          connection.MarkClosed();  // a fetch of nothing: broken client
          malformed.fetch_add(1);
          return;
        }
        reply->swap(it->second);
        connection.parts.erase(it);
      }
      SendReply(task, *reply, fetch.offset);
      return;
    }
    // Answered now or, for a write waiting for its backups, from the
    // replication thread when they hold it: the worker takes the next
    // request meanwhile.
    answering.fetch_add(1);
    handler->HandleAsync(&connection, task.payload,
                         [this, connection = task.connection,
                          header = task.header](std::string answer) {
                           SendReply(Task{connection, header, {}}, answer, 0);
                           answering.fetch_sub(1, std::memory_order_release);
                         });
  }

  // Writes reply[offset..] into the request's slot, in part if it does not
  // fit (keeping the whole reply for the client's fetch).
  void SendReply(const Task& task, const std::string& reply, uint32_t offset) {
    Connection& connection = *task.connection;
    const std::shared_ptr<fabric::Endpoint> endpoint = connection.BeginWrite();
    if (endpoint == nullptr) {
      return;  // the client went away while its request was handled
    }
    const MessageHeader& request = task.header;
    const size_t room = SlotPayloadBytes(request.reply_capacity);
    const size_t left = reply.size() - offset;
    MessageHeader header;
    header.request_id = request.request_id;
    header.sequence = request.sequence;
    std::string_view part(reply.data() + offset, left);
    if (left > room) {
      header.kind = MessageKind::kReplyPart;
      header.total_bytes = static_cast<uint32_t>(reply.size());
      part = part.substr(0, room);
      reply_parts.fetch_add(1);
      std::lock_guard<std::mutex> lock(connection.parts_mutex);
      connection.parts[request.request_id] = reply;
    } else {
      header.kind = MessageKind::kReply;
      header.total_bytes = static_cast<uint32_t>(reply.size());
    }
    char* slot = connection.staging.data() + request.reply_offset;
    EncodeMessage(header, part, slot);
    const size_t bytes = MessageBytes(part.size());
    auto keep_alive = task.connection;
    const Status posted = endpoint->PostWrite(
        connection.peer, slot, bytes, *connection.staging_region,
        connection.reply_buffer.address + request.reply_offset,
        connection.reply_buffer.key, [keep_alive](Status status) {
          if (!status.ok()) keep_alive->MarkClosed();
          keep_alive->writes.fetch_sub(1);
        });
    if (!posted.ok()) {
      connection.writes.fetch_sub(1);
      connection.MarkClosed();
      return;
    }
    WakeIfBlocked();
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() = default;

Status Server::Start(const ServerOptions& options, RequestHandler* handler,
                     std::unique_ptr<Server>* server) {
  KVS_RETURN_IF_ERROR(CheckSecret(options.secret));
  KVS_RETURN_IF_ERROR(CheckSecret(options.client_secret));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->handler = handler;
  KVS_CHECK(options.workers > 0 && options.queue_threshold > 0);
  if (options.endpoint.provider == fabric::Provider::kStream) {
    KVS_RETURN_IF_ERROR(StreamServer::Start(
        handler, options.workers, impl->replica_buffers,
        {&impl->open, &impl->closed, &impl->requests, &impl->malformed},
        &impl->stream));
  } else {
    // Fail early on a provider this machine lacks, not at the first client.
    std::unique_ptr<fabric::Endpoint> probe;
    KVS_RETURN_IF_ERROR(fabric::Endpoint::Open(options.endpoint, &probe));
  }
  KVS_RETURN_IF_ERROR(
      Listen(options.host, options.port, &impl->listen_socket, &impl->port));
  impl->poll_set = ::epoll_create1(EPOLL_CLOEXEC);
  impl->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->poll_set < 0 || impl->wake_fd < 0) {
    return Status::IoError(std::string("epoll/eventfd: ") +
                           std::strerror(errno));
  }
  {
    struct epoll_event watch {};
    watch.events = EPOLLIN;
    watch.data.fd = impl->wake_fd;
    ::epoll_ctl(impl->poll_set, EPOLL_CTL_ADD, impl->wake_fd, &watch);
  }
  // The fabric's threads; a stream server has its own (StreamServer).
  for (size_t i = 0; impl->stream == nullptr && i <= options.workers; ++i) {
    impl->workers.push_back(std::make_unique<Worker>());
  }
  Impl* raw = impl.get();
  for (auto& worker : impl->workers) {
    Worker* w = worker.get();
    const bool control = w == impl->workers.back().get();
    worker->thread = std::thread([raw, w, control] {
      SetThreadName(control ? kThreadFabricControl : kThreadFabricWorker);
      raw->WorkLoop(w);
    });
  }
  if (impl->stream == nullptr) {
    impl->spinner = std::thread([raw] {
      SetThreadName(kThreadFabricSpin);
      raw->SpinLoop();
    });
  }
  impl->acceptor = std::thread([raw] {
    SetThreadName(kThreadFabricAccept);
    raw->AcceptLoop();
  });
  server->reset(new Server(std::move(impl)));
  return Status::Ok();
}

uint16_t Server::port() const { return impl_->port; }

bool Server::Probe() { return impl_->Probe(); }

namespace {

Status CheckReplicaBufferBytes(size_t bytes) {
  if (bytes == 0 || bytes % kUnitBytes != 0 || bytes > kBufferBytesMax) {
    return Status::InvalidArgument(
        "a replica buffer is a multiple of 64 bytes up to 64 MiB");
  }
  return Status::Ok();
}

}  // namespace

Status ReplicaBuffer::Register(std::shared_ptr<fabric::Endpoint> endpoint,
                               size_t bytes,
                               std::shared_ptr<std::atomic<size_t>> live,
                               std::shared_ptr<ReplicaBuffer>* buffer) {
  KVS_RETURN_IF_ERROR(CheckReplicaBufferBytes(bytes));
  std::shared_ptr<ReplicaBuffer> created(new ReplicaBuffer());
  // A NIC's registration pins the pages, which must then stay.
  KVS_RETURN_IF_ERROR(created->memory_.Map(
      bytes, endpoint->provider() != fabric::Provider::kVerbs));
  KVS_RETURN_IF_ERROR(
      endpoint->Register(created->memory_.data(), bytes, &created->region_));
  created->remote_ = {created->region_->RemoteAddress(0),
                      created->region_->key(), bytes};
  created->endpoint_ = std::move(endpoint);
  created->live_ = std::move(live);
  if (created->live_ != nullptr) created->live_->fetch_add(1);
  *buffer = std::move(created);
  return Status::Ok();
}

Status ReplicaBuffer::Allocate(size_t bytes, uint64_t key,
                               std::shared_ptr<std::atomic<size_t>> live,
                               std::shared_ptr<ReplicaBuffer>* buffer) {
  KVS_RETURN_IF_ERROR(CheckReplicaBufferBytes(bytes));
  std::shared_ptr<ReplicaBuffer> created(new ReplicaBuffer());
  KVS_RETURN_IF_ERROR(created->memory_.Map(bytes, /*reclaim=*/true));
  created->remote_ = {0, key, bytes};
  created->live_ = std::move(live);
  if (created->live_ != nullptr) created->live_->fetch_add(1);
  *buffer = std::move(created);
  return Status::Ok();
}

ReplicaBuffer::~ReplicaBuffer() {
  region_.reset();  // before the memory and the endpoint
  if (live_ != nullptr) live_->fetch_sub(1);
}

ServerStats Server::stats() const {
  ServerStats stats;
  stats.connections_accepted = impl_->accepted.load();
  stats.connections_refused = impl_->refused.load();
  stats.handshakes_dropped = impl_->handshakes_dropped.load();
  stats.connections_closed = impl_->closed.load();
  stats.connections_open = impl_->open.load();
  stats.requests = impl_->requests.load();
  stats.reply_parts = impl_->reply_parts.load();
  stats.malformed = impl_->malformed.load();
  stats.worker_wakeups = impl_->wakeups.load();
  stats.spinner_blocks = impl_->blocks.load();
  stats.spinner_blocked = impl_->blocked.load();
  return stats;
}

}  // namespace kvs::channel
