// Send-Index control messages (docs/PROTOCOL.md, "Send-Index"): what a
// primary tells a backup about its logs and compactions, besides the bytes
// it writes one-sidedly. They are replication control messages (magic
// "KVSR", replication_format.h) of types 3 to 6, all integers
// little-endian:
//
//   head, 24 bytes: magic u32, type u8, version u8 (kControlVersion), zero[2],
//   region_id u64, epoch u64
//
//   3 FLUSH-TAIL: persist the log bytes a buffer holds as the copy of a
//     primary segment (LogMirror::Persist)
//       kind u8 (1 small, 2 large, 3 medium), sealed u8 (0 or 1), starts u8
//       (1: the first FLUSH-TAIL since the segment started, so an older
//       copy of it is stale), zero u8, bytes u32 (<= 2 MiB), chain_index
//       u64, primary_segment u64, buffer u32 (the log's buffer: 0 or 1),
//       zero u32
//   4 SHIP-SEGMENT: the index buffer holds a finished index segment
//       primary_segment u64, bytes u32 (1 .. 2 MiB), level u32 (< 64: the
//       level its compaction installs; two may be in progress, the merge
//       of L0s into L1 and the drain below it)
//   5 INSTALL-LEVEL: the primary installed a level (IndexInstaller::Install;
//       the descriptor of the level emptied, unchanged: a rename)
//       level u32 (< 64; 63: the draining level), emptied u32 (0xffffffff:
//       none; else < 64 and not level), descriptor_bytes u32 (<= 64 KiB), zero
//       u32, compacted_lsn u64 (every write at or below it is in the levels
//       now), the LevelDescriptor encoding (primary offsets)
//   6 TRIM: the primary freed log segments (LogMirror::TrimFreed)
//       count u32 (1 .. 4096), zero u32, then per segment: kind u8,
//       zero[7], primary_segment u64, chain_index u64
//
// Thread safety: free functions on values.

#ifndef KVS_REPLICATION_SEND_INDEX_FORMAT_H_
#define KVS_REPLICATION_SEND_INDEX_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "log/log_format.h"
#include "lsm/level.h"
#include "util/status.h"

namespace kvs::replication {

enum class IndexControlType : uint8_t {
  kFlushTail = 3,
  kShipSegment = 4,
  kInstallLevel = 5,
  kTrim = 6,
};

inline constexpr size_t kLevelsMax = 64;
inline constexpr size_t kTrimSegmentsMax = 4096;
inline constexpr size_t kDescriptorBytesMax = 64u << 10;

struct TrimmedCopy {
  log::LogKind kind = log::LogKind::kLarge;
  uint64_t primary_segment = 0;
  uint64_t chain_index = 0;
  bool operator==(const TrimmedCopy&) const = default;
};

struct IndexControl {
  IndexControlType type = IndexControlType::kFlushTail;
  uint64_t region_id = 0;
  uint64_t epoch = 0;
  // FLUSH-TAIL
  log::LogKind kind = log::LogKind::kSmall;
  bool sealed = false;
  bool starts = false;
  uint32_t buffer = 0;
  uint64_t chain_index = 0;
  // FLUSH-TAIL and SHIP-SEGMENT
  uint64_t primary_segment = 0;
  uint32_t bytes = 0;
  // INSTALL-LEVEL (and SHIP-SEGMENT: the level it is for)
  uint32_t level = 0;
  std::optional<uint32_t> emptied;
  uint64_t compacted_lsn = 0;
  lsm::LevelDescriptor descriptor;
  // TRIM
  std::vector<TrimmedCopy> trimmed;
};

// Whether `message` is a replication control message of types 3 to 6.
bool IsIndexControl(std::string_view message);
// Appends the encoding of a valid message.
void EncodeIndexControl(const IndexControl& control, std::string* out);
// Decodes exactly `bytes`: InvalidArgument naming what is wrong for
// anything the table above does not allow.
Status DecodeIndexControl(std::string_view bytes, IndexControl* control);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_SEND_INDEX_FORMAT_H_
