// ClientDoor: the client port, native (docs/ARCHITECTURE.md "Server
// threads"): N shards (shard/shard.h), one thread each; shard 0 also
// accepts, and hands each new connection to the next shard in turn, which
// runs it from its handshake to its close (door/client_connection.h). A
// request runs to completion on its connection's shard, on the request
// handler (the region service): no worker pool, no reply thread, no JNI. A
// replicated write's reply is posted back to the shard by the replication
// thread. This is a client's door: whatever its bytes say, a frame is a
// client request, never a replication message (those come only on the
// replication transport's connections).
//
// TLS when options.tls names a certificate (door/tls_session.h): every
// connection then speaks TLS first, mutual TLS if client certificates are
// required; the files are read at Start, which fails naming a bad one.
//
// Bounds: max_connections open at once (one more is closed as soon as it is
// accepted, and counted); per connection, max_in_flight requests and
// ClientConnection::kOutputHigh bytes of unread replies
// (client_connection.h); frames above max_frame_bytes close their
// connection.
//
// Thread safety: port() and stats() from any thread. The destructor stops
// accepting, waits (bounded) for the replies still to come, then closes
// every connection; the handler must outlive the door.

#ifndef KVS_DOOR_CLIENT_DOOR_H_
#define KVS_DOOR_CLIENT_DOOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "channel/server.h"
#include "door/client_connection.h"
#include "shard/shard.h"
#include "util/status.h"

namespace kvs::door {

struct ClientDoorStats {
  uint64_t requests = 0;
  uint64_t connections = 0;
  uint64_t refused_connections = 0;
  uint64_t refusals = 0;
  uint64_t output_stalls = 0;
  uint64_t malformed = 0;
  uint64_t shard_turns = 0;    // summed over the shards
  uint64_t shard_wakeups = 0;  // turns that began by blocking
};

class ClientDoor {
 public:
  static Status Start(channel::RequestHandler* handler,
                      const ClientDoorOptions& options,
                      std::unique_ptr<ClientDoor>* door);
  ~ClientDoor();
  ClientDoor(const ClientDoor&) = delete;
  ClientDoor& operator=(const ClientDoor&) = delete;

  uint16_t port() const { return port_; }
  ClientDoorStats stats() const;
  // Probes every shard (shard::Shard::Probe): whether each, in index order,
  // ran the probe of the previous call. One thread at a time.
  std::vector<bool> Probe();

 private:
  class Acceptor;
  ClientDoor() = default;

  DoorContext context_;
  std::vector<std::unique_ptr<shard::Shard>> shards_;
  std::shared_ptr<Acceptor> acceptor_;
  int listener_ = -1;
  uint16_t port_ = 0;
};

}  // namespace kvs::door

#endif  // KVS_DOOR_CLIENT_DOOR_H_
