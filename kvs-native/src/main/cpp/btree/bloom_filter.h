// The per-level Bloom filter: one per LSM level per region, stored inside the
// volume and consulted on every get before the level's B+-tree is read, so
// that a level that cannot hold the key costs no device read.
//
// The filter is cache-line blocked: a key's probes all fall into one 64-byte
// block, so a lookup touches one cache line (and one device page when the
// filter is not cached) instead of up to `probe count` lines. The price is a
// slightly higher false-positive rate than a classic filter of the same size
// (about 1.0% at 10 bits per key, in theory and as measured, against 0.82%
// for a classic filter), because blocks are not loaded evenly.
//
// A key is hashed once, h = Hash64(key, hash seed) (util/hash.h):
//   - block index = (h >> 32) * block count >> 32, i.e. the high 32 bits of h
//     scaled to [0, block count) without a division;
//   - the probes walk the block's 512 bits by double hashing whose step
//     itself grows by a third value ("triple hashing", Dillinger and
//     Manolios): bit_0 = h bits 0-8, step_0 = h bits 9-17 with bit 0 set,
//     and bit_{i+1} = (bit_i + step_i) mod 512, step_{i+1} = (step_i + h bits
//     18-26) mod 512, for i < probe count. Plain double hashing gives a key
//     only 17 bits of pattern inside its block; keys of one block then share
//     patterns often enough to raise the false-positive rate two- to
//     fivefold at 16 to 20 bits per key (measured), which 26 bits of pattern
//     avoid. Two probes of one key may hit the same bit.
// Bit b of a block is bit (b mod 8) of the block's byte b / 8.
//
// Serialized format (all integers little-endian, util/coding.h):
//
//   offset  field         size            meaning
//   ------  ------------  --------------  -----------------------------------
//        0  magic         4               0x4642564b: the bytes "KVBF" (KVS
//                                         Bloom Filter)
//        4  version       1               format version, 1
//        5  probe count   1               probes per key, 1..16
//        6  reserved      2               zero
//        8  block count   4               number of 64-byte blocks, >= 1
//       12  reserved      4               zero
//       16  hash seed     8               seed passed to Hash64 for every key
//       24  reserved      40              zero; pads the header to 64 bytes
//       64  bit array     64 * blocks     the blocks, in order
//   64 + 64 * blocks
//           checksum      4               crc32c::Mask(CRC32C of every byte
//                                         before it)
//
// The header is padded to a cache line so that every block is one aligned
// cache line whenever the filter's bytes are 64-byte aligned, as buffers read
// from the device are. The total size is 68 + 64 * block count bytes.

#ifndef KVS_BTREE_BLOOM_FILTER_H_
#define KVS_BTREE_BLOOM_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace kvs::btree {

namespace bloom_filter_format {

inline constexpr uint32_t magic = 0x4642564bu;  // "KVBF" in little-endian
inline constexpr uint8_t version = 1;

// One cache line: the unit of a lookup.
inline constexpr size_t block_size_bytes = 64;
inline constexpr size_t block_size_bits = block_size_bytes * 8;
inline constexpr size_t header_size_bytes = 64;
inline constexpr size_t checksum_size_bytes = 4;
// Header, one block and the checksum: the smallest valid filter.
inline constexpr size_t filter_size_bytes_min =
    header_size_bytes + block_size_bytes + checksum_size_bytes;

// Field offsets within the header.
inline constexpr size_t magic_offset = 0;
inline constexpr size_t version_offset = 4;
inline constexpr size_t probe_count_offset = 5;
inline constexpr size_t block_count_offset = 8;
inline constexpr size_t hash_seed_offset = 16;
inline constexpr size_t reserved_offset = 24;

// 16 probes are the best choice at 23 bits per key, where false positives
// are already rare (well below 0.1%); more would slow every lookup for almost
// nothing.
inline constexpr unsigned probe_count_min = 1;
inline constexpr unsigned probe_count_max = 16;
// The block index is computed from 32 hash bits.
inline constexpr uint64_t block_count_max = UINT32_MAX;

static_assert(block_size_bits == 512, "probe positions are 9-bit");
static_assert(hash_seed_offset + 8 <= header_size_bytes);
static_assert(header_size_bytes % block_size_bytes == 0,
              "blocks stay cache-line aligned after the header");

}  // namespace bloom_filter_format

// Builds a filter from the keys of one level as compaction writes them. Keys
// may come in any order and may repeat; only their 64-bit hashes are kept
// (8 bytes per key) until Finish, which is when the key count, and so the
// filter size, is known.
//
// Not thread-safe: one compaction owns one builder.
class BloomFilterBuilder {
 public:
  static constexpr uint64_t default_hash_seed = 0;
  // Below one bit per key a filter rejects too few absent keys (under half)
  // to be worth its space; 64 bits, 8 bytes, per key is already more memory
  // than any filter should take, so larger values are configuration mistakes.
  static constexpr double bits_per_key_min = 1;
  static constexpr double bits_per_key_max = 64;

  // Requires bits_per_key in [bits_per_key_min, bits_per_key_max] (checked:
  // a configuration error, crashes otherwise). 10 bits per key give about 1%
  // false positives. `hash_seed` is stored in the filter; levels may use
  // different seeds (the level number, say) so that their false positives are
  // independent.
  explicit BloomFilterBuilder(double bits_per_key = 10,
                              uint64_t hash_seed = default_hash_seed);

  BloomFilterBuilder(const BloomFilterBuilder&) = delete;
  BloomFilterBuilder& operator=(const BloomFilterBuilder&) = delete;

  void AddKey(std::string_view key);

  // The number of keys added since construction or the last Finish, where a
  // key equal to the one added just before it is not counted again (the
  // sorted input of a compaction brings duplicates together). Finish sizes
  // the filter for this count.
  size_t KeyCount() const { return key_hashes_.size(); }

  // The serialized filter for the keys added so far, at least one block even
  // for none (a filter that rejects every key). Leaves the builder empty,
  // ready for the next filter.
  std::string Finish();

 private:
  const double bits_per_key_;
  const uint64_t hash_seed_;
  const unsigned probe_count_;
  std::vector<uint64_t> key_hashes_;
};

// Answers "may this level hold the key?" from a serialized filter.
//
// The reader refers to the bytes passed to Open and does not copy them: the
// caller keeps them alive and unchanged for as long as the reader is used.
// After a successful Open the reader is immutable, and MayContain may be
// called from any number of threads at once.
class BloomFilterReader {
 public:
  // A reader that holds no filter: it rules nothing out (MayContain is
  // always true), which is what a level without a filter needs.
  BloomFilterReader() = default;

  // Validates `bytes` as a serialized filter (size, magic, version, probe
  // count, block count against the size, reserved bytes, checksum) and on
  // success points *reader at it. Returns Corruption naming the first problem
  // otherwise, and leaves *reader unchanged. Reads nothing outside `bytes`,
  // whatever they hold: the bytes come from the device.
  static Status Open(std::string_view bytes, BloomFilterReader* reader);

  // False only if the key was certainly not added to the filter.
  bool MayContain(std::string_view key) const;

  // The size of the serialized filter; 0 for a reader without one.
  size_t SizeBytes() const { return size_bytes_; }

 private:
  const unsigned char* blocks_ = nullptr;
  size_t size_bytes_ = 0;
  uint32_t block_count_ = 0;
  unsigned probe_count_ = 0;
  uint64_t hash_seed_ = 0;
};

}  // namespace kvs::btree

#endif  // KVS_BTREE_BLOOM_FILTER_H_
