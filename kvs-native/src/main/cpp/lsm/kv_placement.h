// Hybrid KV placement (Parallax): where a KV pair lives, by its size.
//
// | category | KV size (key + value)          | write path          | device
// levels            |
// |----------|--------------------------------|---------------------|--------------------------|
// | small    | <= small_kv_bytes_max (119)    | write-ahead log, L0 | in place
// in leaves       | | medium   | <= medium_kv_bytes_max (1023)  | write-ahead
// log, L0 | medium log, in place at the last levels | | large    | larger |
// large log; L0 keeps a pointer | pointer in leaves (GC'd log) |
//
// Defaults are the thesis's: small up to 119 bytes, medium 120-1023 bytes,
// large 1024 bytes and more (Parallax, Table 4.1).
//
// L0 payload encoding, by L0 entry kind:
//
// | kind | meaning                | payload |
// |------|------------------------|--------------------------------------------|
// | 1    | value in place         | the value | | 2    | value in the large log
// | fixed64 device offset, fixed32 record size | | 3    | tombstone | empty |

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
  size_t medium_kv_bytes_max = 1023;
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
