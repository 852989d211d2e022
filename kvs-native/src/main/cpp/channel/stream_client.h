// StreamClient: the channel over a plain TCP connection (stream_format.h),
// for networks without RDMA: requests, replies and remote writes are frames
// on the bootstrap socket itself, with no libfabric underneath, so no
// progress engine to drive and nothing to spin on. An owner that has nothing
// to do blocks on wait_fd() (the socket) until the server's bytes arrive.
//
// Bounds: at most `max_outstanding` requests, each of at most
// `request_buffer_bytes` (as on the fabric); frames not yet taken by the
// socket at most `write_staging_bytes` (a request or write beyond that is
// BUSY until the socket drains, except into an empty backlog); a request or
// write unanswered within `request_timeout`, a malformed frame, or the
// server closing the connection breaks it and fails every request waiting.
//
// Thread safety: one thread at a time, like every Client.

#ifndef KVS_CHANNEL_STREAM_CLIENT_H_
#define KVS_CHANNEL_STREAM_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "channel/client.h"
#include "channel/stream_format.h"

namespace kvs::channel {

class StreamClient final : public Client {
 public:
  static Status Connect(const ClientOptions& options, const std::string& host,
                        uint16_t port, std::unique_ptr<Client>* client);
  ~StreamClient() override;

  Status Submit(std::string_view request, Callback done) override;
  size_t Poll() override;
  // Counting those failed but not told yet (the next Poll tells them).
  size_t outstanding() const override {
    return outstanding_.size() + failed_requests_.size();
  }
  size_t writes_in_flight() const override {
    return writes_.size() + failed_writes_.size();
  }
  std::optional<std::chrono::steady_clock::time_point> oldest_unanswered()
      const override;
  int wait_fd() const override { return socket_; }
  bool TryWait() override;
  bool wakes_reliably() const override { return true; }
  uint64_t connection_id() const override { return connection_id_; }
  const Status& health() const override { return broken_; }
  ClientStats stats() const override { return stats_; }
  using Client::WriteRemote;
  Status WriteRemote(std::span<const RemotePiece> pieces,
                     std::function<void(Status)> done) override;
  size_t remote_pieces_max() const override { return kPiecesMax; }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kPiecesMax = 16;
  StreamClient() = default;
  void AwaitArrivals() override;
  std::chrono::milliseconds request_timeout() const override {
    return options_.request_timeout;
  }
  // Whether `bytes` more may be queued now (see "Bounds").
  bool HasRoom(size_t bytes) const;
  // Sends what the socket takes now; breaks the connection on an error.
  void Flush();
  // Reads what arrived and handles every whole frame; how many requests
  // and writes it finished.
  size_t Receive();
  size_t HandleFrame(const FrameHeader& header, std::string_view payload);
  void Break(Status status);

  ClientOptions options_;
  int socket_ = -1;
  uint64_t connection_id_ = 0;
  std::string out_;  // frames not yet sent, from out_sent_
  size_t out_sent_ = 0;
  std::string in_;  // bytes of frames not yet whole
  struct Pending {
    Callback done;
    Clock::time_point posted;
  };
  std::map<uint64_t, Pending> outstanding_;  // by request id
  struct PendingWrite {
    std::function<void(Status)> done;
    Clock::time_point posted;
  };
  std::map<uint64_t, PendingWrite> writes_;  // by its last frame's sequence
  // Requests and writes that failed with the connection, told at the next
  // Poll (never from inside a Submit or a post, whose caller may hold locks
  // their callbacks take: the replicator submits under its group's lock).
  std::vector<Callback> failed_requests_;
  std::vector<std::function<void(Status)>> failed_writes_;
  uint64_t next_request_id_ = 1;
  uint64_t next_write_ = 1;
  Status broken_;
  ClientStats stats_;
};

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_STREAM_CLIENT_H_
