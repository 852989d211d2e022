// Server: the receiving end of the one-sided message protocol (Tebis §3.4,
// Talos §3.6, docs/PROTOCOL.md "Fabric messages").
//
// Each client connection owns a request buffer in the server's memory that
// the client fills with one-sided writes, and an endpoint of its own (as an
// RDMA reliable connection owns its queue pair): a peer that dies with our
// writes to it in flight can only clog its own endpoint's transmit queue,
// which closes with the connection. A spinning thread polls every
// connection's rendezvous point (where the next message's header goes),
// drives each connection's endpoint's progress, and hands whole requests to
// workers; no receive call, no interrupt. Workers run the RequestHandler
// (HandleAsync) and write each reply one-sidedly into the slot of the
// client's reply buffer that the request named; a reply the handler gives
// later (a replicated write, once its backups hold it) is written from the
// handler's thread, and the worker has moved on meanwhile. A reply larger than
// its slot goes in parts: the first part says the total, the client fetches the
// rest.
//
// Scheduling (the seeds' policy): the spinning thread keeps giving tasks to
// the current worker until its private queue holds `queue_threshold`, then
// to the next running worker below the threshold, and wakes a sleeping
// worker only when none is; an idle worker sleeps after `worker_idle`.
//
// Failure handling: a client whose bootstrap socket closes (it died, even by
// kill -9), whose message stays incomplete past `incomplete_timeout`, or
// that sends a malformed message is disconnected and its memory released;
// everyone else is served on.
//
// Bootstraps never wait on one peer: the acceptor thread runs every
// handshake in progress at once on non-blocking sockets (at most
// `handshakes_max`; a new connection beyond that drops the oldest one in
// progress), each bounded by `bootstrap_timeout`, so a peer that connects
// and sends nothing delays nobody else.
//
// Thread safety: Start and the destructor from one thread; stats() from any.

#ifndef KVS_CHANNEL_SERVER_H_
#define KVS_CHANNEL_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "channel/bootstrap_auth.h"
#include "fabric/endpoint.h"
#include "io/aligned_buffer.h"
#include "io/zero_pages.h"
#include "util/status.h"

namespace kvs::channel {

// A buffer that a connected peer writes one-sidedly: the replication
// channel's receiving side (a backup's buffer of one 2 MiB log segment per
// region and log in the cluster). Registered on the endpoint of the
// connection that asked for it -- the one its writer's writes arrive on --
// and keeps that endpoint open while it lives. Read `data` once a later
// message says the bytes are there.
//
// Lifetime: a peer's one-sided writes cannot be recalled, and on providers
// that do not check memory keys (shm) a write to freed memory lands in
// whatever uses it now. So the connection owns its buffers (Session::
// ReplicaBuffers) and frees them only when it closes or when its peer asks
// for the same set again, which a writer does only once its earlier writes
// into that set completed (replication::Replicator). Users hold shared
// references to read what landed after the connection is gone.
class ReplicaBuffer {
 public:
  // `bytes`: a multiple of 64 up to 64 MiB, zeroed. `live` (optional)
  // counts the buffers alive.
  static Status Register(std::shared_ptr<fabric::Endpoint> endpoint,
                         size_t bytes,
                         std::shared_ptr<std::atomic<size_t>> live,
                         std::shared_ptr<ReplicaBuffer>* buffer);
  // The same for the stream transport (stream_format.h): no registration;
  // the connection's own thread copies WRITE frames into it, and `key`
  // names it in them.
  static Status Allocate(size_t bytes, uint64_t key,
                         std::shared_ptr<std::atomic<size_t>> live,
                         std::shared_ptr<ReplicaBuffer>* buffer);
  ~ReplicaBuffer();
  ReplicaBuffer(const ReplicaBuffer&) = delete;
  ReplicaBuffer& operator=(const ReplicaBuffer&) = delete;

  char* data() { return memory_.data(); }
  const char* data() const { return memory_.data(); }
  size_t size() const { return memory_.size(); }
  // Sets bytes [offset, offset + length) to zero; must not race a write
  // into them. Memory is resident only where written since it was last
  // zeroed (io::ZeroPages), so idle buffers cost almost nothing.
  void Zero(size_t offset, size_t length) { memory_.Zero(offset, length); }
  // What the writer needs, for a control message.
  const fabric::RemoteBuffer& remote() const { return remote_; }

 private:
  ReplicaBuffer() = default;
  std::shared_ptr<fabric::Endpoint> endpoint_;
  io::ZeroPages memory_;
  std::unique_ptr<fabric::MemoryRegion> region_;
  fabric::RemoteBuffer remote_;
  std::shared_ptr<std::atomic<size_t>> live_;
};

// The connection a request arrived on, as a handler sees it.
class Session {
 public:
  virtual ~Session() = default;
  // What the peer proved at the bootstrap (bootstrap_auth.h): a client's
  // connection carries client requests only.
  virtual ConnectionKind kind() const = 0;
  // This connection's id, unique among the server's connections while it
  // runs (the Welcome's connection id).
  virtual uint64_t id() const = 0;
  // The set `tag` of `count` replica buffers of `bytes` each that the peer
  // of this connection may write into, zeroed: the set registered for
  // `tag` before on this connection if it has that shape (the peer asks
  // for a set again only once its writes into it completed), else a new
  // one replacing it. The connection keeps the set until it closes or the
  // set is asked for again (ReplicaBuffer, "Lifetime").
  virtual Status ReplicaBuffers(
      uint64_t tag, size_t count, size_t bytes,
      std::vector<std::shared_ptr<ReplicaBuffer>>* buffers) = 0;
};

class RequestHandler {
 public:
  // Takes a request's reply payload, exactly once, on any thread; it must
  // not block.
  using Respond = std::function<void(std::string reply)>;

  virtual ~RequestHandler() = default;
  // Handles one request's payload and appends the reply payload to `reply`.
  // Called on worker threads, concurrently; `request` is valid during the
  // call only. `session` is the fabric connection the request came on
  // (valid during the call only), or null for a request from elsewhere.
  virtual void Handle(Session* session, std::string_view request,
                      std::string* reply) = 0;
  // The same, answering through `respond`: during the call, or later from
  // another thread (a replicated write answers when its backups'
  // completions arrive), so no worker waits. What the server uses.
  virtual void HandleAsync(Session* session, std::string_view request,
                           Respond respond) {
    std::string reply;
    Handle(session, request, &reply);
    respond(std::move(reply));
  }
  // Where the answers to what a turn left in flight arrive, for a caller
  // that watches for them: `fd` (readable once some came; -1: nothing to
  // watch, the handler's own threads take them), valid while `owner`
  // lives (a caller that keeps watching takes a copy of it); `source` a
  // number that tells one owner from a later one.
  struct AnswerWatch {
    int fd = -1;
    uint64_t source = 0;
    std::shared_ptr<const void> owner;
  };
  // Called by a thread that runs requests in turns (a shard; util/turns.h)
  // at the end of each turn in which it handled one: does in bulk what the
  // turn's requests left (posts replicated writes to the backups). With
  // `may_watch` (the thread has an event loop), it may return a descriptor
  // to watch: the caller then calls AnswersArrived once it is readable (or
  // when it stops watching), and EndOfTurn again.
  virtual AnswerWatch EndOfTurn(bool may_watch) {
    (void)may_watch;
    return {};
  }
  virtual void AnswersArrived() {}
  // Whether `request` must never wait behind other requests: it goes to a
  // worker of its own. A request whose handling waits for a peer (a
  // primary's write waits for its backups) must not hold up the messages
  // that peer's progress needs (the backups' replication control), or two
  // servers replicating to each other could each wait for the other.
  virtual bool IsControl(std::string_view request) const {
    (void)request;
    return false;
  }
};

struct ServerOptions {
  fabric::EndpointOptions endpoint;
  // Where the bootstrap listens (TCP); port 0 picks a free port.
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  // Largest request buffer a client may ask for.
  uint32_t request_buffer_bytes_max = 4u << 20;
  size_t max_connections = 1024;
  // Workers for requests; one more serves control requests
  // (RequestHandler::IsControl).
  size_t workers = 2;
  size_t queue_threshold = 64;
  std::chrono::microseconds worker_idle{100};
  // The spinning thread naps between polls once it has found nothing for
  // `spin_idle` (0: never naps, the seeds' behaviour): first `spin_sleep`,
  // doubling while idle up to `spin_sleep_max` (the most latency an idle
  // connection's next request sees). With no connection it blocks. While
  // replica buffers exist (peers write into them unseen and need this
  // side's progress) naps stay at `spin_sleep`.
  std::chrono::microseconds spin_idle{200};
  std::chrono::microseconds spin_sleep{20};
  std::chrono::microseconds spin_sleep_max{1000};
  // Past `spin_block_after` with nothing found (0: never), no knock waiting
  // and none of its own writes in flight, the spinning thread blocks until
  // a client knocks (bootstrap.h Knock: clients knock at least every
  // kKnockEvery, shorter, while they post or wait), a client connects, or
  // `spin_block_max` passes: an idle server costs a wake-up per
  // `spin_block_max`, and a request after a quiet spell a knock.
  std::chrono::microseconds spin_block_after{250};
  // Connections whose endpoint has a wait fd (fabric::EndpointOptions::
  // wait_fd; tcp) wake the spinning thread themselves when a peer's bytes
  // arrive, so it need not spin: with only such connections it blocks
  // after `event_block_after` without work (0: after spin_block_after).
  // Clients knock as before: fi_trywait misses some arrivals (client.h).
  std::chrono::microseconds event_block_after{30};
  std::chrono::milliseconds spin_block_max{100};
  std::chrono::milliseconds incomplete_timeout{2000};
  std::chrono::milliseconds bootstrap_timeout{2000};
  // Bootstrap handshakes in progress at most (see above).
  size_t handshakes_max = 64;
  // The cluster secret (bootstrap_auth.h): peers (primaries replicating
  // here) must prove they hold it before they are admitted. Empty: anyone
  // may connect as a peer (replication is still guarded by the stream keys
  // of OPEN, replication_format.h).
  std::string secret;
  // The client secret: clients must prove it. Empty: anyone who reaches the
  // port may connect as a client.
  std::string client_secret;
};

struct ServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_refused = 0;  // failed authentication
  // Bootstraps that timed out, were malformed, or were dropped for newer
  // ones (ServerOptions::handshakes_max).
  uint64_t handshakes_dropped = 0;
  uint64_t connections_closed = 0;
  uint64_t connections_open = 0;
  uint64_t requests = 0;
  uint64_t reply_parts = 0;  // replies that did not fit their slot
  uint64_t malformed = 0;    // connections closed for bad messages
  uint64_t worker_wakeups = 0;
  uint64_t spinner_blocks = 0;   // times the spinning thread blocked idle
  bool spinner_blocked = false;  // blocked now
};

class Server {
 public:
  static Status Start(const ServerOptions& options, RequestHandler* handler,
                      std::unique_ptr<Server>* server);
  // Stops accepting, disconnects every client, joins the threads.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const;
  ServerStats stats() const;
  // The server's watchdog (one thread at a time, never blocking): whether
  // the thread that reads its connections -- the stream transport's loop
  // (kvs-stream), or the fabric's spinning thread (kvs-fab-spin) -- came
  // round since the previous call (true on the first); if it did, wakes it
  // to come round again.
  bool Probe();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_SERVER_H_
