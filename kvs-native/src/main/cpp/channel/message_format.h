// The framing of the one-sided message protocol (docs/PROTOCOL.md, "Fabric
// messages"): how a message sits in a circular buffer that a peer writes
// with one-sided writes and the owner discovers by polling memory.
//
// A message is a header unit followed by its payload, padded so that the
// whole message is a multiple of the unit; the last 4 bytes of a message
// with a payload are its tail marker.
//
//   offset  size  field
//   0       4     magic "KVSM"
//   4       1     version (1)
//   5       1     kind (MessageKind)
//   6       2     reserved, 0
//   8       4     payload_bytes
//   12      4     payload_crc (CRC32C of the payload)
//   16      8     request_id
//   24      4     reply_offset (REQUEST: where the reply goes, in the
//                 client's reply buffer)
//   28      4     reply_capacity (REQUEST: the reply slot's size)
//   32      4     sequence (per connection and direction; REPLY: the
//                 request's)
//   36      4     message_bytes (header + padded payload)
//   40      4     total_bytes (REPLY_PART: the whole reply's size)
//   44      12    reserved, 0
//   56      4     header_crc (CRC32C of bytes 0..55)
//   60      4     receive marker = kReceiveMarker ^ sequence
//   ...           payload, padding
//   end-4   4     tail marker = kTailMarker ^ sequence (if payload_bytes > 0)
//
// The receiver trusts nothing until every check passes: it polls the
// receive marker, then the header checksum, then the tail marker, then the
// payload checksum. libfabric does not promise the order in which the bytes
// of one write land, so a marker may be seen before the bytes it closes;
// the checksums catch that, and the receiver keeps polling (bounded by a
// timeout) until the message is whole. Markers include the sequence number,
// so bytes left from an earlier lap of the buffer never match.
//
// Thread safety: free functions.

#ifndef KVS_CHANNEL_MESSAGE_FORMAT_H_
#define KVS_CHANNEL_MESSAGE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace kvs::channel {

inline constexpr size_t kUnitBytes = 64;
inline constexpr size_t kHeaderBytes = kUnitBytes;
inline constexpr size_t kTailMarkerBytes = 4;
inline constexpr uint32_t kMagic = 0x4d53564b;  // "KVSM" little-endian
inline constexpr uint8_t kFormatVersion = 1;
inline constexpr uint32_t kReceiveMarker = 0x5eceb1ed;
inline constexpr uint32_t kTailMarker = 0x7a11ed05;

enum class MessageKind : uint8_t {
  kRequest = 1,
  kReply = 2,
  // The first part of a reply larger than its slot; the client fetches the
  // rest and grows its future reply slots.
  kReplyPart = 3,
  // Nothing more at the end of the buffer: the next message is at offset 0.
  kReset = 4,
  // The client asks for the rest of a reply sent in part; the payload is
  // FetchPayload. Answered like a request: REPLY_PART or, at the end, REPLY.
  kFetch = 5,
};

// FETCH payload: the request whose reply is wanted, and from which byte.
inline constexpr size_t kFetchPayloadBytes = 12;
struct FetchPayload {
  uint64_t request_id = 0;
  uint32_t offset = 0;
};
std::string EncodeFetch(const FetchPayload& fetch);
bool DecodeFetch(std::string_view payload, FetchPayload* fetch);

// The largest payload a message of `slot_bytes` (a multiple of the unit,
// at least two units) can carry.
constexpr size_t SlotPayloadBytes(size_t slot_bytes) {
  return slot_bytes - kHeaderBytes - kTailMarkerBytes;
}

struct MessageHeader {
  MessageKind kind = MessageKind::kRequest;
  uint32_t payload_bytes = 0;
  uint32_t payload_crc = 0;
  uint64_t request_id = 0;
  uint32_t reply_offset = 0;
  uint32_t reply_capacity = 0;
  uint32_t sequence = 0;
  uint32_t message_bytes = 0;
  uint32_t total_bytes = 0;
};

// The bytes a message with `payload_bytes` of payload occupies.
constexpr size_t MessageBytes(size_t payload_bytes) {
  return payload_bytes == 0 ? kHeaderBytes
                            : kHeaderBytes + (payload_bytes + kTailMarkerBytes +
                                              kUnitBytes - 1) /
                                                 kUnitBytes * kUnitBytes;
}

// Writes a complete message (header, payload, padding, tail marker) into
// `out`, which must hold MessageBytes(payload.size()). Fills in
// payload_bytes, payload_crc and message_bytes of `header`.
void EncodeMessage(MessageHeader header, std::string_view payload, char* out);

// What a poll of one rendezvous point found.
enum class PollResult {
  kNothing,     // no message for `sequence` here (yet)
  kIncomplete,  // its receive marker is here, the rest is still arriving
  kComplete,    // a whole, checked message: header and payload are valid
};

// Examines the bytes at a rendezvous point of a buffer with `available`
// bytes from `at` to the buffer's end, expecting the message numbered
// `sequence`. On kComplete fills `header` and `payload` (a view into the
// buffer). A message that is whole but wrong -- a header that names sizes
// outside the buffer, a bad magic or version, reserved bits set -- is
// reported as Corruption; a checksum mismatch is kIncomplete (the bytes may
// still be landing), which the caller turns into Corruption after its
// timeout.
Status PollMessage(const char* at, size_t available, uint32_t sequence,
                   PollResult* result, MessageHeader* header,
                   std::string_view* payload);

// Clears the words a later poll could mistake for this message's markers.
void ClearMessage(char* at, size_t message_bytes);

}  // namespace kvs::channel

#endif  // KVS_CHANNEL_MESSAGE_FORMAT_H_
