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
//   1           1     zero
//   2           2     key_size k (1..4096)
//   4           4     value_size v (0..1 MiB; 0 for a delete)
//   8           k     key
//   8+k         v     value
//   8+k+v       4     crc: masked CRC32C of bytes [0, 8+k+v)
//
// Control message (a fabric message to the backup's server):
//
//   offset  size  field
//   0       4     magic "KVSR" (0x5253564b: tells it from a client request,
//                 whose first byte is the wire version 1)
//   4       1     type: 1 OPEN, 2 FLUSH
//   5       3     zero
//   8       8     region_id
//   16      8     epoch
//   24      4     buffer (FLUSH: 0 or 1)
//   28      4     bytes (FLUSH: record bytes written into it)
//   32      8     sequence (FLUSH: flushes of this stream so far)
//
// Reply: status u8 (kvs_status), 7 zero bytes, then for an OK OPEN the two
// buffers (address u64, key u64, size u64 each), for an error the message.
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
#include "util/status.h"

namespace kvs::replication {

inline constexpr uint32_t kMagic = 0x5253564b;  // "KVSR"
inline constexpr size_t kControlBytes = 40;
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
};

size_t RecordBytes(const Record& record);
// Appends the encoding of a valid record to `out`.
void EncodeRecord(const Record& record, std::string* out);
// Decodes the records of `bytes` (exactly), in order. Corruption naming the
// offset of the first record that is malformed or fails its checksum.
Status DecodeRecords(std::string_view bytes, std::vector<Record>* records);
// The length of the longest prefix of `bytes` that is whole, valid records
// (what a backup applies from a buffer nobody flushed).
size_t ValidPrefix(std::string_view bytes);

struct Control {
  ControlType type = ControlType::kOpen;
  uint64_t region_id = 0;
  uint64_t epoch = 0;
  uint32_t buffer = 0;
  uint32_t bytes = 0;
  uint64_t sequence = 0;
};

// Whether `message` is a replication control message (by its magic).
bool IsControl(std::string_view message);
// Appends the head every control message starts with (24 bytes: magic,
// type, three zero bytes, region id, epoch); send_index_format.h shares it.
void EncodeControlHead(uint8_t type, uint64_t region_id, uint64_t epoch,
                       std::string* out);
void EncodeControl(const Control& control, std::string* out);
Status DecodeControl(std::string_view bytes, Control* control);

struct ControlReply {
  Status status;
  std::vector<fabric::RemoteBuffer> buffers;  // OPEN
};
void EncodeControlReply(const ControlReply& reply, std::string* out);
Status DecodeControlReply(std::string_view bytes, ControlReply* reply);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICATION_FORMAT_H_
