// Client: the sending end of the one-sided message protocol.
//
// The client manages both buffers of its connection: for each request it
// takes space in the server's request buffer (it knows what the server has
// consumed: a request's space is free once its reply arrived) and a reply
// slot in its own reply buffer, and names the slot in the request. It
// writes the request one-sidedly and polls the slot's receive marker for
// the reply. A reply that did not fit comes in parts: the client fetches
// the rest (FETCH messages) and grows its reply slots for the future.
//
// No spin is unbounded: a request not answered within `request_timeout`,
// a server whose bootstrap socket closes, or a malformed reply fails every
// outstanding request with a clear error and breaks the connection (a late
// reply could otherwise land in a reused slot); the owner reconnects.
//
// Thread safety: one thread at a time (the owner serializes Submit, Poll
// and Call).

#ifndef KVS_CHANNEL_CLIENT_H_
#define KVS_CHANNEL_CLIENT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "channel/bootstrap_auth.h"
#include "channel/message_format.h"
#include "channel/ring_allocator.h"
#include "fabric/endpoint.h"
#include "io/aligned_buffer.h"
#include "util/status.h"

namespace kvs::channel {

struct ClientOptions {
  fabric::EndpointOptions endpoint;
  // The buffers' sizes (the seeds' default: 256 KiB each).
  uint32_t request_buffer_bytes = 256u << 10;
  uint32_t reply_buffer_bytes = 256u << 10;
  // The first reply slot size; grows (up to half the reply buffer)
  // when replies come in parts.
  uint32_t reply_slot_bytes = 512;
  size_t max_outstanding = 64;
  // Staging for WriteRemote (registered on first use).
  uint32_t write_staging_bytes = 4u << 20;
  // Open the endpoint with a wait fd (fabric::EndpointOptions::wait_fd)
  // for an owner that blocks on it (the replication thread); others need
  // not pay for its signalling.
  bool wait_fd = false;
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds bootstrap_timeout{2000};
  // What this connection is to the server (bootstrap_auth.h): a client's,
  // or a peer's (a primary replicating to a backup).
  ConnectionKind kind = ConnectionKind::kClient;
  // The secret of that kind (the client secret, or the cluster secret for
  // a peer), proved to the server, which must prove it back. Empty:
  // connects only to servers that require none of this kind.
  std::string secret;
};

struct ClientStats {
  uint64_t requests = 0;
  uint64_t replies = 0;
  uint64_t fetches = 0;  // FETCH messages for replies sent in part
  uint64_t wraps = 0;    // RESET messages (request buffer wrap-around)
  uint32_t reply_slot_bytes = 0;
  uint64_t knocks = 0;  // bootstrap.h Knock
};

// How often a client knocks while it posts or waits (Client::KnockIfDue):
// at most one send() per 100 us, so a server between requests of a steady
// load blocks too (ServerOptions::spin_block_after, which must be longer).
// Over tcp the client's bytes wake a blocked server themselves (its
// endpoints' wait fds), but libfabric 1.17's fi_trywait there misses some
// arrivals (4 KiB round trips waited for the server's 100 ms block bound),
// so knocks stay: they bound what a missed arrival costs.
inline constexpr std::chrono::microseconds kKnockEvery{100};

// A connection to a channel server, over the fabric (FabricClient) or a
// plain TCP stream (StreamClient, channel/stream_client.h), chosen by
// `ClientOptions::endpoint.provider`.
class Client {
 public:
  // The reply payload (valid during the call) or why there is none.
  using Callback = std::function<void(Status status, std::string_view reply)>;

  static Status Connect(const ClientOptions& options, const std::string& host,
                        uint16_t port, std::unique_ptr<Client>* client);
  virtual ~Client() = default;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `request`; `done` is called from a later Poll. BUSY if the
  // buffers or the outstanding limit are full now (Poll, then retry);
  // TOO_LARGE if the request can never fit the request buffer; the
  // connection's error once it is broken.
  virtual Status Submit(std::string_view request, Callback done) = 0;
  // Drives progress, delivers arrived replies, enforces timeouts and
  // liveness. Returns how many requests finished.
  virtual size_t Poll() = 0;
  // Submit and poll until the reply: a blocking round trip.
  Status Call(std::string_view request, std::string* reply);

  virtual size_t outstanding() const = 0;
  // Writes (messages and remote writes) posted whose completion Poll has
  // not delivered yet.
  virtual size_t writes_in_flight() const = 0;
  // When the oldest request or remote write still unanswered was posted;
  // nullopt when none is. How long the server has left work it was given
  // undone (a replication stream's stall, Replicator).
  virtual std::optional<std::chrono::steady_clock::time_point>
  oldest_unanswered() const = 0;
  // The connection's wait fd (ClientOptions::wait_fd), or -1: readable
  // once the server's bytes arrive, before Poll; and whether blocking on it
  // now is safe (nothing arrived meanwhile, nothing waits to be sent).
  virtual int wait_fd() const = 0;
  virtual bool TryWait() = 0;
  // Whether a wait on wait_fd() never misses an arrival (plain sockets):
  // the owner may then block without a bound shorter than its timeouts.
  virtual bool wakes_reliably() const { return false; }
  // The id the server gave this connection at the bootstrap (Welcome):
  // what a peer's proofs bind to (replication_format.h, OPEN).
  virtual uint64_t connection_id() const = 0;
  // OK while usable; else why it broke.
  virtual const Status& health() const = 0;
  virtual ClientStats stats() const = 0;

  // Replication channel, writing side (a primary): writes `bytes` at
  // `offset` of a peer's buffer (Session::ReplicaBuffers, described in a
  // control message) one-sidedly; `done` is called from a later Poll when
  // the write completed. The bytes are copied first: BUSY while there is
  // no room for them (post again later; it never waits for room). A write
  // not completed within `request_timeout` breaks the connection. Writes
  // on this connection stay in order with its messages, so a control
  // message sent after `done` finds the bytes in place.
  Status WriteRemote(const fabric::RemoteBuffer& target, uint64_t offset,
                     std::string_view bytes, std::function<void(Status)> done);
  // The same for up to remote_pieces_max() pieces, each to its own place
  // (of one peer buffer or several): one post, and `done` once for all.
  struct RemotePiece {
    const fabric::RemoteBuffer* target = nullptr;
    uint64_t offset = 0;
    std::string_view bytes;
  };
  virtual Status WriteRemote(std::span<const RemotePiece> pieces,
                             std::function<void(Status)> done) = 0;
  virtual size_t remote_pieces_max() const = 0;

 protected:
  Client() = default;
  // Call, between polls that found nothing: waits a little for the
  // server's bytes.
  virtual void AwaitArrivals() = 0;
  virtual std::chrono::milliseconds request_timeout() const = 0;
};

// The one-sided message protocol over a libfabric endpoint. Remote writes
// are staged in a registered buffer of `options.write_staging_bytes`.
class FabricClient final : public Client {
 public:
  static Status Connect(const ClientOptions& options, const std::string& host,
                        uint16_t port, std::unique_ptr<Client>* client);
  ~FabricClient() override;

  Status Submit(std::string_view request, Callback done) override;
  size_t Poll() override;
  size_t outstanding() const override { return outstanding_.size(); }
  size_t writes_in_flight() const override {
    return endpoint_->outstanding() + writes_done_.size();
  }
  std::optional<std::chrono::steady_clock::time_point> oldest_unanswered()
      const override;
  int wait_fd() const override { return endpoint_->wait_fd(); }
  bool TryWait() override { return endpoint_->TryWait(); }
  uint64_t connection_id() const override { return connection_id_; }
  const Status& health() const override { return broken_; }
  ClientStats stats() const override;
  using Client::WriteRemote;
  Status WriteRemote(std::span<const RemotePiece> pieces,
                     std::function<void(Status)> done) override;
  size_t remote_pieces_max() const override {
    return endpoint_->remote_targets_max();
  }

 private:
  struct Outstanding;
  FabricClient() = default;
  void AwaitArrivals() override;
  std::chrono::milliseconds request_timeout() const override {
    return options_.request_timeout;
  }
  Status Init(const std::string& host, uint16_t port);
  // Writes one message into the server's request buffer.
  Status SendMessage(const MessageHeader& header, std::string_view payload,
                     uint64_t* allocation);
  // Takes a reply slot of at least `bytes` (rounded to the unit).
  std::optional<RingAllocator::Allocation> TakeReplySlot(uint32_t bytes);
  void Break(Status status);
  Status BreakOnPostFailure(const Status& posted);
  bool PollOne(Outstanding* request, bool* finished);

  ClientOptions options_;
  std::unique_ptr<fabric::Endpoint> endpoint_;
  int socket_ = -1;
  fi_addr_t server_ = 0;
  fabric::RemoteBuffer server_requests_;
  io::AlignedBuffer staging_;  // mirror of the server's request buffer
  std::unique_ptr<fabric::MemoryRegion> staging_region_;
  io::AlignedBuffer replies_;
  std::unique_ptr<fabric::MemoryRegion> replies_region_;
  std::unique_ptr<RingAllocator> request_ring_, reply_ring_;
  io::AlignedBuffer write_staging_;
  std::unique_ptr<fabric::MemoryRegion> write_staging_region_;
  std::unique_ptr<RingAllocator> write_ring_;
  // Remote writes completed, reported from Poll (never from inside the
  // provider's progress, which a post may drive while its caller holds
  // locks its callback takes).
  struct FinishedWrite {
    uint64_t staging_id = 0;  // staging space to release
    Status status;
    std::function<void(Status)> done;
  };
  std::vector<FinishedWrite> writes_done_;
  // Remote writes posted and not finished: their deadlines, by staging id
  // (ids grow, so the first is the oldest).
  std::map<uint64_t, std::chrono::steady_clock::time_point> write_deadlines_;
  Status write_failure_;  // of a message write
  uint32_t sequence_ = 0;
  uint64_t next_request_id_ = 1;
  uint32_t reply_slot_bytes_ = 0;
  std::map<uint64_t, std::unique_ptr<Outstanding>> outstanding_;
  Status broken_;
  uint64_t connection_id_ = 0;
  uint64_t polls_ = 0;
  // Knocks (bootstrap.h): a server blocks once nothing came for a while
  // (ServerOptions::spin_block_after, longer than kKnockEvery); knocking at
  // least every kKnockEvery while this client posts or waits keeps it
  // polling, and wakes it when it blocked.
  void KnockIfDue(std::chrono::steady_clock::time_point now);
  std::chrono::steady_clock::time_point last_knock_{};
  ClientStats stats_;
};

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_CLIENT_H_
