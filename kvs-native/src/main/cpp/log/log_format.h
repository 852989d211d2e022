// On-device format of the value logs (small/write-ahead, large, medium).
//
// A log is a chain of 2 MiB segments; the catalog maps (region, log kind,
// chain index) to segment numbers. Each segment starts with a 4 KiB header
// block; records follow back to back (not aligned) and never span segments.
// A segment that was left for the next one ends with an end record.
//
// Segment header (4096 bytes; the rest of the block is zero):
//
// | offset | size | field       | meaning                                     |
// |--------|------|-------------|---------------------------------------------|
// | 0      | 8    | magic       | "KVSLOG01"                                  |
// | 8      | 8    | region_id   | owning region                               |
// | 16     | 1    | kind        | 1 small (write-ahead), 2 large, 3 medium    |
// | 17     | 7    | zero        |                                             |
// | 24     | 8    | chain_index | position of this segment in the log         |
// | 32     | 8    | nonce       | random per use of the segment               |
// | 40     | 4    | crc         | masked CRC32C of bytes [0, 40)              |
//
// Record (20-byte header, then key, then value, then a write id if flagged):
//
// | offset     | size | field      | meaning                                  |
// |------------|------|------------|------------------------------------------|
// | 0          | 4    | crc        | masked CRC32C, seeded with the segment   |
// |            |      |            | nonce, of bytes [4, end of record)       |
// | 4          | 8    | lsn        | region-wide log sequence number          |
// | 12         | 4    | value_size | v                                        |
// | 16         | 2    | key_size   | k                                        |
// | 18         | 1    | type       | 1 put, 2 delete, 3 segment end,          |
// |            |      |            | 4 sync mark                              |
// | 19         | 1    | flags      | bit 0: a write id follows the value;     |
// |            |      |            | bit 1: an atomic batch goes on with the  |
// |            |      |            | next LSN; other bits zero (puts and      |
// |            |      |            | deletes only)                            |
// | 20         | k    | key        |                                          |
// | 20 + k     | v    | value      | for a sync mark: fixed64 log position    |
// |            |      |            | durable before it                        |
// | 20 + k + v | 16   | write id   | client (fixed64), sequence (fixed64): a  |
// |            |      |            | conditional write's, so that a retry of  |
// |            |      |            | it is recognised after a failover        |
//
// An atomic batch (lsm::Region::WriteBatch) takes consecutive LSNs, its
// records in either log; every one but the last carries bit 1, so recovery
// finds a batch whose last record is missing and drops all of it.
//
// A value pointer (offset, size) names the whole record, write id included;
// the value lies at offset 20 + k, v bytes long, either way. Records without
// a write id are as they were before flags existed (the byte was zero).
//
// Seeding record checksums with the segment's nonce makes records left over
// from an earlier use of a reused segment fail their check, so they can
// never be replayed as if they had been written now.
//
// A log position is DeviceOffset(chain_index, offset_in_segment): it grows
// monotonically along the log and names a point in it.

#ifndef KVS_LOG_LOG_FORMAT_H_
#define KVS_LOG_LOG_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace kvs::log {

enum class LogKind : uint8_t { kSmall = 1, kLarge = 2, kMedium = 3 };

enum class RecordType : uint8_t {
  kPut = 1,
  kDelete = 2,
  kSegmentEnd = 3,
  kSyncMark = 4,
};

inline constexpr size_t kSegmentHeaderBytes = 4096;
inline constexpr size_t kRecordHeaderBytes = 20;
inline constexpr size_t kWriteIdBytes = 16;
inline constexpr uint8_t kRecordHasWriteId = 1;
inline constexpr uint8_t kRecordContinuesBatch = 2;
inline constexpr uint8_t kRecordFlagsKnown =
    kRecordHasWriteId | kRecordContinuesBatch;

const char* LogKindName(LogKind kind);

struct SegmentHeader {
  uint64_t region_id = 0;
  LogKind kind = LogKind::kSmall;
  uint64_t chain_index = 0;
  uint64_t nonce = 0;
};

// Writes the header block into `out` (kSegmentHeaderBytes, zero-filled).
void EncodeSegmentHeader(const SegmentHeader& header, char* out);
// Corruption if the block is not a valid header.
Status DecodeSegmentHeader(std::string_view block, SegmentHeader* header);

// Who wrote a conditional write, so that a retry of it is recognised: a
// client's id and its sequence number for the write (both 0: none).
struct WriteId {
  uint64_t client = 0;
  uint64_t sequence = 0;

  bool present() const { return client != 0 || sequence != 0; }
  bool operator==(const WriteId& other) const {
    return client == other.client && sequence == other.sequence;
  }
};

struct Record {
  uint64_t lsn = 0;
  RecordType type = RecordType::kPut;
  std::string_view key;
  std::string_view value;
  WriteId write_id;  // puts and deletes only
  // An atomic batch's record with more of the batch at the next LSN.
  bool continues_batch = false;

  size_t EncodedSize() const {
    return kRecordHeaderBytes + key.size() + value.size() +
           (write_id.present() ? kWriteIdBytes : 0);
  }
};

// Encodes `record` at `out` (EncodedSize() bytes).
void EncodeRecord(const Record& record, uint64_t nonce, char* out);

// Decodes the record at the front of `input`. Returns false if no intact
// record of this segment (`nonce`) starts there. On success `record` refers
// into `input` and `size` is the record's encoded size.
bool DecodeRecord(std::string_view input, uint64_t nonce, Record* record,
                  size_t* size);

// The catalog key of a log segment: "<prefix><16 hex digits of index>".
std::string SegmentCatalogKey(std::string_view prefix, uint64_t chain_index);

}  // namespace kvs::log

#endif  // KVS_LOG_LOG_FORMAT_H_
