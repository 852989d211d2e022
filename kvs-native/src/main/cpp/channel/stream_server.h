// StreamServer: the server side of the stream transport (stream_format.h),
// for a channel::Server started with the provider "stream": the acceptor's
// handshake done, each connection's socket joins one event loop thread,
// which blocks in epoll_wait while nothing arrives -- no spinning, no naps.
//
// The loop reads every connection, copies WRITE frames into the replica
// buffers they name as they come (in order with the messages after them),
// acknowledges them with one WRITTEN per read, and hands MESSAGE frames to
// workers (a peer's replication control to a worker of its own, as on the
// fabric: RequestHandler::IsControl). Replies are sent by whoever has them
// (a worker, the replication thread), without blocking; what the socket
// does not take waits for the loop.
//
// Bounds: a connection with kInFlightMax requests unanswered, or more than
// kOutputMax bytes of replies its peer has not read, is not read until both
// fall below half; a malformed frame, or a WRITE to a buffer it was not
// given or outside it, closes the connection (counted as malformed).
//
// Thread safety: Add from any thread; the destructor stops the loop, waits
// (bounded) for the replies still to come, and closes every connection.

#ifndef KVS_CHANNEL_STREAM_SERVER_H_
#define KVS_CHANNEL_STREAM_SERVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "channel/bootstrap_auth.h"
#include "channel/server.h"
#include "channel/stream_format.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace kvs::channel {

struct StreamConnection;

class StreamServer {
 public:
  // Counters it keeps with the server's (Server::stats); `open` counts the
  // connections handed over, and falls as they close here.
  struct Counters {
    std::atomic<uint64_t>* open;
    std::atomic<uint64_t>* closed;
    std::atomic<uint64_t>* requests;
    std::atomic<uint64_t>* malformed;
  };
  static constexpr size_t kInFlightMax = 1024;
  static constexpr size_t kOutputMax = 32u << 20;

  static Status Start(RequestHandler* handler, size_t workers,
                      std::shared_ptr<std::atomic<size_t>> replica_buffers,
                      Counters counters, std::unique_ptr<StreamServer>* server);
  ~StreamServer();
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  // Serves `socket` (its Welcome sent; this server closes it) as connection
  // `id`, whose peer proved it is a `kind`.
  void Add(int socket, ConnectionKind kind, uint64_t id);

  // The server's watchdog (one thread at a time, never blocking): whether
  // the loop came round since the previous call (true on the first); if it
  // did, wakes it to come round again. A loop stuck in a turn answers no
  // more (docs/ARCHITECTURE.md "Watchdog").
  bool Probe();

 private:
  StreamServer() = default;
  void Loop();
  void Wake();
  // Reads what arrived on `connection` and acts on every whole frame;
  // false if it must close.
  bool Read(const std::shared_ptr<StreamConnection>& connection);
  bool Apply(StreamConnection& connection, const FrameHeader& header,
             std::string_view payload);
  void Dispatch(const std::shared_ptr<StreamConnection>& connection,
                uint64_t request_id, std::string request);
  void Close(const std::shared_ptr<StreamConnection>& connection);
  // Sets which events the loop watches `connection` for (reading unless
  // held back, writing while output waits).
  void Watch(StreamConnection& connection);

  RequestHandler* handler_ = nullptr;
  std::shared_ptr<std::atomic<size_t>> replica_buffers_;
  Counters counters_{};
  int poll_set_ = -1;
  int wake_fd_ = -1;
  // Probe: asked by the watchdog, answered at the top of each turn.
  std::atomic<uint64_t> probes_asked_{0};
  std::atomic<uint64_t> probes_answered_{0};
  std::atomic<bool> running_{true};
  std::mutex mutex_;  // guards added_ and rewatch_
  std::vector<std::shared_ptr<StreamConnection>> added_;
  // Connections whose watch must change (output waiting, or room again).
  std::vector<std::shared_ptr<StreamConnection>> rewatch_;
  std::map<int, std::shared_ptr<StreamConnection>> connections_;  // loop's
  // Requests handed to the handler and not answered yet.
  std::atomic<uint64_t> answering_{0};
  std::unique_ptr<ThreadPool> workers_, control_;
  std::thread loop_;
  friend struct StreamConnection;
};

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_STREAM_SERVER_H_
