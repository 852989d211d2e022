// Value-log replication formats (docs/PROTOCOL.md, "Value-log replication").
//
// A primary writes its region's writes, as records, one-sidedly into two
// 2 MiB buffers each backup registered for the region, filling them in
// turn; control messages travel as ordinary fabric messages.
//
// Record in a replica buffer (little-endian, back to back from offset 0):
//
//   offset      size  field
//   0           1     type: 1 put, 2 delete
//   1           1     flags: bit 0, a write id follows the value; bit 1,
//                     an atomic batch goes on with the next record (other
//                     bits zero)
//   2           2     key_size k (1..4096)
//   4           4     value_size v (0..1 MiB; 0 for a delete)
//   8           k     key
//   8+k         v     value
//   8+k+v       16    write id, if flagged: client, sequence (fixed64 each;
//                     log_format.h), which the backup logs with the write
//   8+k+v(+16)  4     crc: masked CRC32C of the bytes before it
//
// An atomic batch is consecutive records, all but the last flagged to go
// on, queued as one unit: the primary never splits it across buffers, a
// backup applies it whole (lsm::Region::WriteBatch), and ValidPrefix ends
// before a batch whose last record is not there.
//
// Control message (a fabric message to the backup's server):
//
//   offset  size  field
//   0       4     magic "KVSR" (0x5253564b: tells it from a client request,
//                 whose first byte is the wire version 1)
//   4       1     type: 1 OPEN, 2 FLUSH
//   5       1     version (kControlVersion, 2 since SHIP-SEGMENT names its
//                 level; another is refused)
//   6       2     zero
//   8       8     region_id
//   16      8     epoch
//   24      4     buffer (OPEN: the mode; FLUSH: 0 or 1)
//   28      4     bytes (FLUSH: record bytes written into it)
//   32      8     sequence (OPEN: send-index, the incarnation of the
//                 primary's region, lsm::Region::incarnation; FLUSH:
//                 flushes of this stream so far)
//   40      32    OPEN only: proof = HMAC-SHA256(stream key, "kvs replication
//                 open v1" 0x00 bytes [0, 40) of this message, connection id
//                 u64) -- OPEN is 72 bytes, FLUSH 40
//
// The stream key is the region's at this epoch, which the master gives the
// primary and every backup with the open command (docs/PROTOCOL.md,
// "Control RPC") and nobody else: only the group's primary can open a stream
// into a backup, whatever secret a stranger holds or whether the cluster has
// one at all. The connection id (the Welcome's, channel/bootstrap.h) binds
// the proof to the connection it was sent on; the stream's later messages
// are taken only from that connection (service/region_service.h, "Doors").
//
// Reply: status u8 (kvs_status), 7 zero bytes, then for an error the
// message; for an OK OPEN:
//
//   offset  size  field
//   0       4     buffers b (2 build-index, 7 send-index)
//   4       4     copies c (send-index: what the backup holds of the same
//                 incarnation, so the catch-up sends only what it lacks)
//   8       4     levels l (likewise)
//   12      4     zero
//   16      24*b  buffers: address u64, key u64, size u64
//   ..      24*c  copies: kind u8 (1 small, 2 large, 3 medium), sealed u8,
//                 2 zero, bytes u32, primary segment u64, chain index u64
//   ..      16*l  levels: level u32 (< 64), 4 zero, PrimaryLevelHash u64
//
// Thread safety: free functions on values.

#ifndef KVS_REPLICATION_REPLICATION_FORMAT_H_
#define KVS_REPLICATION_REPLICATION_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/endpoint.h"
#include "log/log_format.h"
#include "util/status.h"

namespace kvs::replication {

inline constexpr uint32_t kMagic = 0x5253564b;  // "KVSR"
// The control messages' version (byte 5 of every one, build-index's and
// Send-Index's): a message of another version is refused, naming both.
inline constexpr uint8_t kControlVersion = 2;
inline constexpr size_t kControlBytes = 40;
inline constexpr size_t kOpenProofBytes = 32;
inline constexpr size_t kOpenControlBytes = kControlBytes + kOpenProofBytes;
inline constexpr std::string_view kOpenPurpose = "kvs replication open v1";
inline constexpr size_t kRecordOverheadBytes = 12;
inline constexpr size_t kBuffers = 2;
// Each replica buffer: one segment.
inline constexpr size_t kBufferBytes = size_t{2} << 20;

enum class RecordType : uint8_t { kPut = 1, kDelete = 2 };
enum class ControlType : uint8_t { kOpen = 1, kFlush = 2 };

struct Record {
  RecordType type = RecordType::kPut;
  std::string_view key;
  std::string_view value;
  log::WriteId write_id;
  // An atomic batch goes on with the next record.
  bool continues_batch = false;
};

size_t RecordBytes(const Record& record);
// Appends the encoding of a valid record to `out`.
void EncodeRecord(const Record& record, std::string* out);
// Decodes the records of `bytes` (exactly), in order. Corruption naming the
// offset of the first record that is malformed or fails its checksum.
Status DecodeRecords(std::string_view bytes, std::vector<Record>* records);
// The length of the longest prefix of `bytes` that is whole, valid records
// and ends no batch part-way (what a backup applies from a buffer nobody
// flushed).
size_t ValidPrefix(std::string_view bytes);

struct Control {
  ControlType type = ControlType::kOpen;
  uint64_t region_id = 0;
  uint64_t epoch = 0;
  uint32_t buffer = 0;
  uint32_t bytes = 0;
  uint64_t sequence = 0;
  std::string proof;  // OPEN: kOpenProofBytes (OpenProof)
};

// The proof an OPEN carries: `control` (an OPEN, its proof ignored) sent on
// connection `connection_id` under `stream_key`. Zeros for an empty key.
std::string OpenProof(const Control& control, std::string_view stream_key,
                      uint64_t connection_id);
// Whether `control` (an OPEN) proves `stream_key` on `connection_id`; false
// for an empty key.
bool VerifyOpen(const Control& control, std::string_view stream_key,
                uint64_t connection_id);

// Whether `message` is a replication control message (by its magic).
bool IsControl(std::string_view message);
// OK if the control message `bytes` (at least 6 bytes, magic checked) is of
// kControlVersion; else INVALID_ARGUMENT naming both versions.
Status CheckControlVersion(std::string_view bytes);
// Appends the head every control message starts with (24 bytes: magic,
// type, three zero bytes, region id, epoch); send_index_format.h shares it.
void EncodeControlHead(uint8_t type, uint64_t region_id, uint64_t epoch,
                       std::string* out);
void EncodeControl(const Control& control, std::string* out);
Status DecodeControl(std::string_view bytes, Control* control);

// Bounds of an OPEN reply's lists (a backup holding more reports nothing,
// and is caught up from nothing).
inline constexpr size_t kHeldCopiesMax = 16384;
inline constexpr size_t kHeldLevelsMax = 64;

// A log segment copy a backup holds (send_index_sink.h).
struct HeldCopy {
  log::LogKind kind = log::LogKind::kSmall;
  uint64_t primary_segment = 0;
  uint64_t chain_index = 0;
  uint32_t bytes = 0;
  bool sealed = false;
};
// A level a backup installed, by the digest of the primary's descriptor.
struct HeldLevel {
  uint32_t level = 0;
  uint64_t primary_hash = 0;
};

struct ControlReply {
  Status status;
  std::vector<fabric::RemoteBuffer> buffers;  // OPEN
  std::vector<HeldCopy> copies;               // OPEN, send-index
  std::vector<HeldLevel> levels;              // OPEN, send-index
};
void EncodeControlReply(const ControlReply& reply, std::string* out);
Status DecodeControlReply(std::string_view bytes, ControlReply* reply);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICATION_FORMAT_H_
