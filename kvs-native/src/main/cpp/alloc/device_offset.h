// Device offsets: every pointer the engine stores is a full byte offset on
// the volume, split into a segment number (high bits) and an offset inside
// the 2 MiB segment (low 21 bits). Replication rewrites only the segment part.

#ifndef KVS_ALLOC_DEVICE_OFFSET_H_
#define KVS_ALLOC_DEVICE_OFFSET_H_

#include <cstdint>

#include "util/limits.h"

namespace kvs::alloc {

inline constexpr uint64_t SegmentOf(uint64_t device_offset) {
  return device_offset >> limits::segment_offset_bits;
}
inline constexpr uint64_t OffsetInSegment(uint64_t device_offset) {
  return device_offset & (limits::segment_size_bytes - 1);
}
inline constexpr uint64_t SegmentStart(uint64_t segment) {
  return segment << limits::segment_offset_bits;
}
inline constexpr uint64_t DeviceOffset(uint64_t segment,
                                       uint64_t offset_in_segment) {
  return SegmentStart(segment) | offset_in_segment;
}

static_assert(SegmentOf(DeviceOffset(7, 12345)) == 7);
static_assert(OffsetInSegment(DeviceOffset(7, 12345)) == 12345);

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_DEVICE_OFFSET_H_
