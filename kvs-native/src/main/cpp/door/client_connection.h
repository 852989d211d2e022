// ClientConnection: one client's connection to the client door, run by one
// shard (shard/shard.h) from its handshake to its close: the shard reads
// it, runs each request to completion on the request handler (the region
// service: engine and replication), and writes the replies, one send per
// turn. A replicated write's reply comes later from the replication thread
// and is posted back to the shard.
//
// Framing (docs/PROTOCOL.md "Client TCP framing"): a little-endian u32
// length, then a wire-protocol request (or, first, the handshake's Hello).
// A frame above the door's bound closes the connection (counted malformed).
//
// TLS, when the door has a TlsContext: the connection's bytes pass through
// its TlsSession (door/tls_session.h), which only transforms buffers; the
// connection still does its own recv and send. The client handshake runs
// inside TLS: the Challenge waits, queued, until the TLS handshake
// completes. A failed TLS handshake (a client speaking no TLS, or without
// the client certificate mutual TLS requires) or a record that does not
// decrypt counts as a refusal (logged, bounded, as the client handshake's
// are): the session's alert is sent and only this connection closes. The
// handshake deadline covers both handshakes. Replies are encrypted at the
// end of the turn as the socket takes them, a send per
// TlsSession::kCiphertextAheadBytes of records.
//
// Bounds: with max_in_flight requests unanswered, or more than kOutputHigh
// bytes of replies the client has not read (plaintext not yet encrypted
// and ciphertext not yet sent alike), the connection is not read
// (whole frames already read wait, in order) until both fall to half and
// below kOutputLow: a client that sends and never reads costs at most one
// read of frames, its requests in flight and one high-water mark of
// replies.
//
// Thread safety: everything on its shard; the replies' callbacks post to
// it from any thread.

#ifndef KVS_DOOR_CLIENT_CONNECTION_H_
#define KVS_DOOR_CLIENT_CONNECTION_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "channel/server.h"
#include "door/answer_watcher.h"
#include "door/tls_session.h"
#include "shard/shard.h"

namespace kvs::door {

struct ClientDoorOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port
  size_t shards = 1;
  size_t max_connections = 1024;  // open at once; one more is closed
  size_t max_in_flight = 256;     // per connection
  size_t max_frame_bytes = 8u << 20;
  std::string client_secret;  // empty: any client is served
  std::chrono::milliseconds handshake_timeout{10'000};
  TlsFiles tls;  // none named: plain TCP
};

// What the door counts (monitoring; docs/OPERATIONS.md "Bounds and
// overload").
struct DoorCounters {
  std::atomic<uint64_t> requests{0};             // answered
  std::atomic<uint64_t> connections{0};          // open now
  std::atomic<uint64_t> refused_connections{0};  // beyond max_connections
  std::atomic<uint64_t> refusals{0};  // failed the handshake (TLS or client)
  std::atomic<uint64_t> output_stalls{0};  // stopped: replies not read
  std::atomic<uint64_t> malformed{0};      // frames above the bound
  // Requests handed to the handler whose replies have not come back.
  std::atomic<uint64_t> answering{0};
};

// What the door's connections share (owned by the door).
struct DoorContext {
  channel::RequestHandler* handler = nullptr;
  // Each shard's end of turn, by shard index (door/answer_watcher.h).
  std::vector<std::shared_ptr<AnswerWatcher>> watchers;
  ClientDoorOptions options;
  std::unique_ptr<TlsContext> tls;  // null: plain TCP
  DoorCounters counters;
};

class ClientConnection final
    : public shard::Shard::Handler,
      public std::enable_shared_from_this<ClientConnection> {
 public:
  // Replies waiting above this stop a connection's reading; below
  // kOutputLow it resumes. Above the largest reply (a 1 MiB value), so one
  // reply alone never stops a connection.
  static constexpr size_t kOutputHigh = 2u << 20;
  static constexpr size_t kOutputLow = 512u << 10;

  // `socket`: accepted, non-blocking; closed by this connection.
  ClientConnection(DoorContext* context, shard::Shard* shard, int socket,
                   std::string peer);
  ~ClientConnection() override;

  // On its shard: watches the socket, sends the Challenge, and arms the
  // handshake's deadline.
  void Begin();
  // On its shard: closes the socket (the replies still to come are
  // dropped as they arrive). Idempotent.
  void Close();
  void OnReady(uint32_t events) override;

 private:
  enum class State { kHandshake, kOpen, kRefused, kClosed };

  // Reads what the socket holds (bounded per turn), through TLS if any;
  // false if the client closed.
  bool ReadSocket();
  // The TLS session failed (`why`): a refusal; its alert is sent, nothing
  // else, then the connection closes.
  void FailTls(const Status& why);
  // Acts on the whole frames read while the connection may take them.
  void TakeFrames();
  void OnHello(std::string_view body);
  void Execute(std::string_view request);
  // A reply, on the shard.
  void Answer(std::string reply);
  // Refuses the handshake (an Admission saying why, if it can be sent: not
  // before the TLS handshake completes), then closes.
  void Refuse(const std::string& why);
  // Counts a refusal, and logs the 1st, 2nd, 4th, 8th...
  void CountRefusal(const std::string& why);
  void Queue(std::string_view body);
  // At the end of the turn: sends, takes held frames, sets the watch.
  void ScheduleSettle();
  void Settle();
  // Sends what the socket takes (encrypting ahead of it, bounded, with
  // TLS); false if the socket failed.
  bool Flush();
  // Sends a prefix of `bytes` as long as the socket takes it, adding its
  // length to *sent; false if the socket failed.
  bool Send(std::string_view bytes, size_t* sent);
  // Reply bytes the client has not read: the output bound's measure.
  size_t OutputWaiting() const;
  // Whether bytes wait for the socket to take them (not for the TLS
  // handshake to complete).
  bool SocketOutputWaiting() const;
  bool MayTake() const;
  void Watch();

  DoorContext* const context_;
  shard::Shard* const shard_;
  const int socket_;
  const std::string peer_;
  State state_ = State::kHandshake;
  std::string challenge_nonce_, hello_nonce_;
  std::unique_ptr<TlsSession> tls_;  // null: plain TCP
  std::string in_;                   // plaintext received
  size_t in_at_ = 0;                 // in_'s bytes before this were taken
  std::string out_;                  // plaintext to send
  size_t out_sent_ = 0;  // out_'s bytes before this were sent (or encrypted)
  size_t in_flight_ = 0;
  bool held_ = false;  // stopped by a bound: resumes below half
  bool settle_scheduled_ = false;
  uint32_t watched_ = 0;
};

}  // namespace kvs::door

#endif  // KVS_DOOR_CLIENT_CONNECTION_H_
