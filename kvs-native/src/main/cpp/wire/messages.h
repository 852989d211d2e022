// The request/reply encoding every transport carries (docs/PROTOCOL.md):
// the fabric protocol's messages and the Java client's Netty frames.
//
// Request (little-endian):
//
//   offset  size  field
//   0       1     version (1)
//   1       1     opcode
//   2       6     reserved, 0
//   8       8     request_id
//   16      8     region_id
//   24      8     epoch
//   32      ...   body, by opcode (see PROTOCOL.md)
//
// Reply:
//
//   offset  size  field
//   0       1     version (1)
//   1       1     opcode (the request's)
//   2       1     status (kvs_status)
//   3       5     reserved, 0
//   8       8     request_id
//   16      ...   body: by opcode if OK, else message_size u32 + message
//
// Decoders produce views into the bytes they were given (no copies) and
// reject, with INVALID_ARGUMENT naming the problem, anything that does not
// match the tables exactly; they never read outside the input.
//
// Thread safety: free functions on values; no shared state.

#ifndef KVS_WIRE_MESSAGES_H_
#define KVS_WIRE_MESSAGES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace kvs::wire {

inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kRequestHeaderBytes = 32;
inline constexpr size_t kReplyHeaderBytes = 16;

// Limits (PROTOCOL.md, "Limits").
inline constexpr size_t kKeyBytesMax = 4096;
inline constexpr size_t kValueBytesMax = size_t{1} << 20;
inline constexpr uint32_t kScanLimitMax = 10'000;
inline constexpr uint32_t kScanBytesMax = uint32_t{4} << 20;
inline constexpr size_t kMultiGetKeysMax = 1024;
inline constexpr size_t kBatchWritesMax = 1024;
inline constexpr size_t kMessageTextBytesMax = 4096;
inline constexpr size_t kMessageBytesMax = size_t{8} << 20;
// The end-bound size meaning "no end bound" in a SCAN.
inline constexpr uint32_t kNoEndBound = 0xffffffff;
// The size meaning "no value" in a COMPARE_AND_SET: an expected value of
// none (the key must have no value), or a new value of none (delete it).
inline constexpr uint32_t kNoValue = 0xffffffff;

enum class Opcode : uint8_t {
  kNoop = 0,
  kPut = 1,
  kGet = 2,
  kDelete = 3,
  kScan = 4,
  kMultiGet = 5,
  kCompareAndSet = 6,
  kIncrement = 7,
  kBatch = 8,
  kScanReverse = 9,
};
inline constexpr uint8_t kOpcodeMax = 9;
const char* OpcodeName(Opcode opcode);

// One write of a BATCH: a put of `value`, or a delete (no value).
struct BatchWrite {
  bool put = true;
  std::string_view key;
  std::string_view value;
};

// A request. Views point into the bytes it was decoded from (or that the
// caller owns while encoding).
struct Request {
  Opcode opcode = Opcode::kNoop;
  uint64_t request_id = 0;
  uint64_t region_id = 0;
  uint64_t epoch = 0;
  std::string_view key;    // PUT, GET, DELETE, COMPARE_AND_SET, INCREMENT;
                           // SCAN, SCAN_REVERSE: the start key (the lower
                           // bound)
  std::string_view value;  // PUT
  // COMPARE_AND_SET: the value the key must hold (nullopt: none) for the
  // key to be given `replacement` (nullopt: deleted).
  std::optional<std::string_view> expected;
  std::optional<std::string_view> replacement;
  // INCREMENT: added to the key's 8-byte counter (none counts as 0).
  int64_t delta = 0;
  // COMPARE_AND_SET and INCREMENT: the write's id (client, sequence; both 0:
  // none), kept with it on every replica so that a retry is answered as
  // the first attempt was (lsm/write_ids.h); whether this is a retry; and
  // for a retry its floor, the largest LSN of the region its client saw in
  // a reply before the first attempt.
  uint64_t client_id = 0;
  uint64_t sequence = 0;
  uint64_t floor = 0;
  bool retry = false;
  // SCAN, SCAN_REVERSE
  std::optional<std::string_view> end;  // exclusive; none: no end bound
  uint32_t limit = 0;
  uint32_t max_bytes = 0;
  // MULTI_GET
  std::vector<std::string_view> keys;
  // BATCH: applied in order, all or nothing, within one region.
  std::vector<BatchWrite> writes;
};

struct Reply {
  Opcode opcode = Opcode::kNoop;
  Status::Code status = Status::Code::kOk;
  uint64_t request_id = 0;
  std::string_view message;  // not OK
  std::string_view value;    // GET
  // SCAN (ascending), SCAN_REVERSE (descending)
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  bool more = false;
  // MULTI_GET: one per answered key; nullopt = not found.
  std::vector<std::optional<std::string_view>> values;
  // COMPARE_AND_SET: whether it was applied; if not, the key's value then
  // (nullopt: none).
  bool applied = false;
  std::optional<std::string_view> current;
  // INCREMENT: the counter's value after it.
  int64_t counter = 0;
  // COMPARE_AND_SET and INCREMENT: the region's last LSN when it answered
  // (a client's floor for its retries).
  uint64_t lsn = 0;
};

// Whether `opcode` writes (PUT, DELETE, COMPARE_AND_SET, INCREMENT, BATCH).
bool Writes(Opcode opcode);

// Appends the encoding of `request` to `out`. The request must be valid
// (as DecodeRequest would accept it): an invalid one is a programmer error.
void EncodeRequest(const Request& request, std::string* out);
void EncodeReply(const Reply& reply, std::string* out);

// Decodes exactly `bytes`.
Status DecodeRequest(std::string_view bytes, Request* request);
Status DecodeReply(std::string_view bytes, Reply* reply);

// Checks a request's fields against the limits (the encoder's precondition,
// and what DecodeRequest enforces).
Status ValidateRequest(const Request& request);
Status ValidateReply(const Reply& reply);

}  // namespace kvs::wire

#endif  // KVS_WIRE_MESSAGES_H_
