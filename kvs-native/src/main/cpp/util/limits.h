// Every size, count and timeout of the engine in one place, each with its
// unit last in the name and a comment on why it has that value.

#ifndef KVS_UTIL_LIMITS_H_
#define KVS_UTIL_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace kvs::limits {

// --- Device layout ---------------------------------------------------------

// The unit of allocation (Parallax, Tebis): large enough that per-segment
// metadata stays tiny (a 4 TiB volume has 2 Mi segments), small enough that a
// region's partly used tail segments waste little.
inline constexpr uint64_t segment_size_bytes = 2ull << 20;
inline constexpr unsigned segment_offset_bits = 21;
static_assert(segment_size_bytes == (1ull << segment_offset_bits));

// Alignment and granularity of direct I/O: the logical block size of every
// device we target (NVMe, SATA SSD, and files on ext4/xfs).
inline constexpr uint64_t io_alignment_bytes = 4096;
static_assert(segment_size_bytes % io_alignment_bytes == 0);

// --- Keys and values ---------------------------------------------------------

// Documented limits: keys up to 4 KiB and values up to 1 MiB; beyond them an
// operation fails with TOO_LARGE. A key must fit a B+-tree index node with
// room for at least a few pivots; a value must fit one log segment with its
// record header.
inline constexpr size_t key_size_bytes_max = 4096;
inline constexpr size_t value_size_bytes_max = 1u << 20;
static_assert(key_size_bytes_max + value_size_bytes_max + 64 <
              segment_size_bytes);

}  // namespace kvs::limits

#endif  // KVS_UTIL_LIMITS_H_
