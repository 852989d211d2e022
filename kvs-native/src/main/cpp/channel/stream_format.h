// The framing of the stream transport (docs/PROTOCOL.md, "Stream frames"):
// the channel over a plain TCP connection, for networks without RDMA. After
// the bootstrap's Welcome (bootstrap.h, provider "stream") the bootstrap
// socket itself carries frames both ways, little-endian:
//
//   offset  size  field
//   0       1     version (1)
//   1       1     type (FrameType)
//   2       2     reserved, 0
//   4       4     payload_bytes
//   8       8     id (by type, below)
//   16      ...   payload
//
//   type      direction         id                    payload
//   MESSAGE   writer -> server  the request's id      the request
//   REPLY     server -> writer  the request's id      the reply
//   WRITE     writer -> server  the write's sequence  u64 buffer key,
//                                                      u64 offset, bytes
//   WRITTEN   server -> writer  the last sequence     none
//                               applied (cumulative)
//
// A WRITE is the stream's one-sided write: the server copies its bytes into
// the replica buffer named by the key (channel::ReplicaBuffer) in the order
// the frames came, before it reads the frames after it, so a MESSAGE sent
// after a write finds its bytes in place (as on the fabric). TCP carries the
// bytes whole and in order, so frames carry no checksum; anything malformed
// (an unknown version or type, a reserved field not zero, a payload above
// kStreamPayloadMax, a write outside its buffer) closes the connection.
//
// Thread safety: free functions.

#ifndef KVS_CHANNEL_STREAM_FORMAT_H_
#define KVS_CHANNEL_STREAM_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace kvs::channel {

inline constexpr size_t kFrameHeaderBytes = 16;
inline constexpr uint8_t kStreamVersion = 1;
// A replica buffer's largest write (64 MiB, bootstrap.h kBufferBytesMax)
// and its key and offset.
inline constexpr uint32_t kStreamPayloadMax = (64u << 20) + 16;
inline constexpr size_t kWriteHeadBytes = 16;  // key, offset

enum class FrameType : uint8_t {
  kMessage = 1,
  kReply = 2,
  kWrite = 3,
  kWritten = 4,
};

struct FrameHeader {
  FrameType type = FrameType::kMessage;
  uint32_t payload_bytes = 0;
  uint64_t id = 0;
};

// Appends a frame of `type` with `id` and `payload` to `out`.
void AppendFrame(FrameType type, uint64_t id, std::string_view payload,
                 std::string* out);
// Appends a WRITE frame: `bytes` for `offset` of the buffer `key`.
void AppendWrite(uint64_t sequence, uint64_t key, uint64_t offset,
                 std::string_view bytes, std::string* out);

// Decodes the header at the start of `bytes` (at least kFrameHeaderBytes):
// InvalidArgument naming the problem if it is malformed. `server` says which
// end reads it (a server takes MESSAGE and WRITE, a writer REPLY and
// WRITTEN).
Status DecodeFrameHeader(std::string_view bytes, bool server,
                         FrameHeader* header);
// Splits a WRITE's payload.
Status DecodeWrite(std::string_view payload, uint64_t* key, uint64_t* offset,
                   std::string_view* bytes);

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_STREAM_FORMAT_H_
