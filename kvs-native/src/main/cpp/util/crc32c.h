// CRC32C (Castagnoli), the checksum of every log record, node and metadata
// block the engine writes and of every protocol header.
//
// Polynomial 0x1EDC6F41, reflected 0x82F63B78, initial value and final xor
// 0xFFFFFFFF: the variant of iSCSI (RFC 3720), ext4 and SSE4.2's crc32
// instruction. The CPU instruction is used when present (checked once, at
// first use); otherwise a table-driven slicing-by-8 loop computes the same
// values.
//
// Thread safety: all functions are pure and may be called concurrently.

#ifndef KVS_UTIL_CRC32C_H_
#define KVS_UTIL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace kvs::crc32c {

// Extends `crc`, the checksum of some preceding bytes (0 for none), with
// data[0..size). Extend(Extend(0, a), b) == Extend(0, a ++ b).
uint32_t Extend(uint32_t crc, const void* data, size_t size);

// The checksum of data[0..size).
inline uint32_t Value(const void* data, size_t size) {
  return Extend(0, data, size);
}

// True when Extend runs on the CPU's CRC32C instruction.
bool IsHardwareAccelerated();

// The two implementations, exposed so tests can compare them directly.
// ExtendHardware must only be called when IsHardwareAccelerated() is true.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size);
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size);

// A checksum stored next to the bytes it covers is masked, so that a CRC
// computed over data that itself embeds CRCs does not degenerate (the
// LevelDB log format does the same). Mask is a rotation plus a constant.
inline uint32_t Mask(uint32_t crc) {
  constexpr uint32_t kMaskDelta = 0xa282ead8u;
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}
inline uint32_t Unmask(uint32_t masked) {
  constexpr uint32_t kMaskDelta = 0xa282ead8u;
  const uint32_t rotated = masked - kMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace kvs::crc32c

#endif  // KVS_UTIL_CRC32C_H_
