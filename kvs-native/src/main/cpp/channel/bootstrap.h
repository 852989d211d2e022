// The bootstrap of a fabric connection: a TCP connection over which client
// and server exchange endpoint addresses and buffer descriptors, and which
// then stays open as the liveness signal (a peer that dies closes it; the
// kernel does that even for kill -9).
//
// The server speaks first: a Challenge (bootstrap_auth.h), with which the
// client proves it holds the secret of its kind of connection. Then Hello
// (client -> server) and Welcome (server -> client), little-endian:
//
//   Hello                              Welcome
//   u32  magic "KVSH"                  u32  magic "KVSW"
//   u8   version (3)                   u8   version (3)
//   u8   provider (Provider)           u8   status (0 OK, else kvs_status)
//   u16  address size                  u16  address size (0 if not OK)
//   ...  client endpoint address       ...  server endpoint address, or the
//   u64  reply buffer remote address        error message if not OK
//   u64  reply buffer key              u64  request buffer remote address
//   u32  reply buffer bytes            u64  request buffer key
//   u32  request buffer bytes wanted   u32  request buffer bytes
//   u8   kind (0 client, 1 peer)       u64  connection id
//   u8   zero[3]                       32   proof of the secret (zeros if
//   32   client nonce                       not OK or no secret)
//   32   proof of the secret           u32  CRC32C of the bytes before
//   u32  CRC32C of the bytes before
//
// A server with a secret of the Hello's kind checks its proof before it
// opens an endpoint for the client; a wrong one gets a Welcome with status
// INVALID_ARGUMENT and a message saying so, and the connection closes.
//
// Thread safety: free functions; a socket is used by one thread at a time.

#ifndef KVS_CHANNEL_BOOTSTRAP_H_
#define KVS_CHANNEL_BOOTSTRAP_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "channel/bootstrap_auth.h"
#include "fabric/endpoint.h"
#include "util/status.h"

namespace kvs::channel {

inline constexpr size_t kAddressBytesMax = 1024;
inline constexpr uint32_t kBufferBytesMin = 4096;
inline constexpr uint32_t kBufferBytesMax = 64u << 20;

struct Hello {
  fabric::Provider provider = fabric::Provider::kShm;
  ConnectionKind kind = ConnectionKind::kClient;
  std::string address;
  fabric::RemoteBuffer reply_buffer;
  uint32_t request_buffer_bytes = 0;
  std::string nonce;  // kNonceBytes
  std::string proof;  // kProofBytes
};

struct Welcome {
  Status status;  // not OK: the server refused; the rest is empty
  std::string address;
  fabric::RemoteBuffer request_buffer;
  uint64_t connection_id = 0;
  std::string proof;  // kProofBytes; zeros when no secret or not OK
};

std::string EncodeHello(const Hello& hello);
std::string EncodeWelcome(const Welcome& welcome);
// Reads one message from a connected socket, waiting at most `timeout`.
Status ReadChallenge(int socket, std::chrono::milliseconds timeout,
                     Challenge* challenge);
Status ReadHello(int socket, std::chrono::milliseconds timeout, Hello* hello);
// For a reader that gathers a Hello's bytes itself (the server's acceptor
// never blocks on one peer): how many bytes the Hello starting with `head`
// (at least its first kHelloHeadBytes) has in all, or InvalidArgument if it
// is not one; then DecodeHello parses exactly those bytes.
inline constexpr size_t kHelloHeadBytes = 8;
Status HelloBytes(std::string_view head, size_t* total);
Status DecodeHello(std::string_view bytes, Hello* hello);
Status ReadWelcome(int socket, std::chrono::milliseconds timeout,
                   Welcome* welcome);

// The client's side of the bootstrap on a connected `socket`: reads the
// Challenge, sends `hello` (its kind, provider, address and buffers filled
// in; the nonce and the proof of `secret` are added here) and reads the
// Welcome, checking the server's proof. An error for a refused Welcome, a
// server that requires a secret this client lacks (or none while it has
// one), or a wrong proof; each waits at most `timeout`.
Status ClientHandshake(int socket, const std::string& secret,
                       std::chrono::milliseconds timeout, Hello* hello,
                       Welcome* welcome);

// Writes all of `bytes`, waiting at most `timeout`.
Status WriteAll(int socket, std::string_view bytes,
                std::chrono::milliseconds timeout);

// A listening socket on `host`:`port` (0: any free port), non-blocking.
Status Listen(const std::string& host, uint16_t port, int* socket,
              uint16_t* bound_port);
// Connects to `host`:`port`, waiting at most `timeout`.
Status Connect(const std::string& host, uint16_t port,
               std::chrono::milliseconds timeout, int* socket);
// Whether the peer closed the connection (or it failed); never blocks.
// Reads (and drops) the knocks waiting before the end.
bool PeerClosed(int socket);

// Knocks: a client sends one byte on its bootstrap socket so that a server
// blocked for lack of work (ServerOptions::spin_block_after) polls again;
// bytes after the WELCOME mean nothing else. Never blocks: a full socket
// buffer holds knocks enough.
void Knock(int socket);
// What a bootstrap socket held: knocks, and whether the peer closed it (or
// it failed). Reads every byte waiting; never blocks.
struct Knocks {
  bool knocked = false;
  bool closed = false;
};
Knocks TakeKnocks(int socket);

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_BOOTSTRAP_H_
