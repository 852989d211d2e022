// Hybrid KV placement (Parallax): where a KV pair lives, by its size
// (key + value bytes).
//
// | category | KV size        | write path          | device levels         |
// |----------|----------------|---------------------|-----------------------|
// | small    | <= 119 B       | write-ahead log, L0 | in place in leaves    |
// | medium   | 120 .. 1022 B  | write-ahead log, L0 | medium log, merged in |
// |          |                |                     | place at the last one |
// | large    | >= 1023 B      | large log; L0 holds | pointer in leaves;    |
// |          |                | a pointer           | large-log GC          |
//
// The bounds are configurable (PlacementOptions). Defaults follow the
// thesis (small up to 119 bytes; Parallax, Table 4.1) and the design
// brief's size classes: its large pairs are 1023 bytes, so medium ends at
// 1022 and large starts at 1023.
//
// L0 payload encoding, by L0 entry kind:
//
// | kind | meaning                | payload                               |
// |------|------------------------|---------------------------------------|
// | 1    | value in place         | the value                             |
// | 2    | value in the large log | fixed64 device offset, fixed32 size   |
// | 3    | tombstone              | empty                                 |

#ifndef KVS_LSM_KV_PLACEMENT_H_
#define KVS_LSM_KV_PLACEMENT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/coding.h"

namespace kvs::lsm {

enum class KvCategory : uint8_t { kSmall, kMedium, kLarge };

struct PlacementOptions {
  size_t small_kv_bytes_max = 119;
  size_t medium_kv_bytes_max = 1022;
};

inline KvCategory Categorize(const PlacementOptions& options, size_t key_size,
                             size_t value_size) {
  const size_t size = key_size + value_size;
  if (size <= options.small_kv_bytes_max) return KvCategory::kSmall;
  if (size <= options.medium_kv_bytes_max) return KvCategory::kMedium;
  return KvCategory::kLarge;
}

enum L0Kind : uint8_t {
  kL0InPlace = 1,
  kL0LargePointer = 2,
  kL0Tombstone = 3,
};

struct LogPointer {
  uint64_t device_offset = 0;
  uint32_t record_size = 0;
};

inline std::string EncodeLogPointer(const LogPointer& pointer) {
  std::string out(12, '\0');
  coding::EncodeFixed64(out.data(), pointer.device_offset);
  coding::EncodeFixed32(out.data() + 8, pointer.record_size);
  return out;
}

inline bool DecodeLogPointer(std::string_view payload, LogPointer* pointer) {
  if (payload.size() != 12) return false;
  pointer->device_offset = coding::DecodeFixed64(payload.data());
  pointer->record_size = coding::DecodeFixed32(payload.data() + 8);
  return true;
}

}  // namespace kvs::lsm

#endif  // KVS_LSM_KV_PLACEMENT_H_
