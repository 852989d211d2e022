#include "btree/bloom_filter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "util/check.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/hash.h"

namespace kvs::btree {
namespace {

namespace format = bloom_filter_format;

// Probe positions are taken modulo the block's bit count.
constexpr unsigned kBitInBlockMask = format::block_size_bits - 1;
constexpr unsigned kBitInBlockBits = 9;
static_assert((1u << kBitInBlockBits) == format::block_size_bits);

// The probes of one key, as described in the header: all of them come from
// one hash, which the builder and the reader must derive identically.
class ProbeSequence {
 public:
  ProbeSequence(uint64_t hash, uint32_t block_count)
      // Scaling the high 32 bits by the block count maps them evenly onto
      // [0, block_count) and leaves the low bits, which pick the probes,
      // independent of the block.
      : block_offset_bytes_(
            static_cast<size_t>(((hash >> 32) * block_count) >> 32) *
            format::block_size_bytes),
        bit_(HashBits(hash, 0)),
        step_(HashBits(hash, kBitInBlockBits) | 1u),
        step_increment_(HashBits(hash, 2 * kBitInBlockBits)) {}

  // Where the key's block starts in the bit array.
  size_t block_offset_bytes() const { return block_offset_bytes_; }
  // The current probe's bit within the block, in [0, 512).
  unsigned bit() const { return bit_; }
  void Next() {
    bit_ = (bit_ + step_) & kBitInBlockMask;
    step_ = (step_ + step_increment_) & kBitInBlockMask;
  }

 private:
  static unsigned HashBits(uint64_t hash, unsigned shift) {
    return static_cast<unsigned>(hash >> shift) & kBitInBlockMask;
  }

  size_t block_offset_bytes_;
  unsigned bit_;
  unsigned step_;
  unsigned step_increment_;
};

// About bits_per_key * ln 2 probes minimize the false-positive rate of a
// filter with that many bits per key.
unsigned ProbeCountFor(double bits_per_key) {
  KVS_CHECK_MSG(bits_per_key >= BloomFilterBuilder::bits_per_key_min &&
                    bits_per_key <= BloomFilterBuilder::bits_per_key_max,
                "Bloom filter bits per key out of range");
  const double best = std::round(bits_per_key * std::numbers::ln2);
  return std::clamp(static_cast<unsigned>(best), format::probe_count_min,
                    format::probe_count_max);
}

std::string Hex32(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0x%08x", value);
  return buffer;
}

Status FilterCorruption(const std::string& problem) {
  return Status::Corruption("bloom filter: " + problem);
}

}  // namespace

BloomFilterBuilder::BloomFilterBuilder(double bits_per_key, uint64_t hash_seed)
    : bits_per_key_(bits_per_key),
      hash_seed_(hash_seed),
      probe_count_(ProbeCountFor(bits_per_key)) {}

void BloomFilterBuilder::AddKey(std::string_view key) {
  const uint64_t hash = Hash64(key.data(), key.size(), hash_seed_);
  // A repeated key sets the same bits again; not storing it keeps the filter
  // sized for the distinct keys. Compaction's sorted input makes repeats
  // adjacent, so comparing with the last hash finds them.
  if (!key_hashes_.empty() && key_hashes_.back() == hash) {
    return;
  }
  key_hashes_.push_back(hash);
}

std::string BloomFilterBuilder::Finish() {
  const double bits = static_cast<double>(key_hashes_.size()) * bits_per_key_;
  const double blocks =
      std::max(1.0, std::ceil(bits / format::block_size_bits));
  KVS_CHECK_MSG(blocks <= static_cast<double>(format::block_count_max),
                "Bloom filter has too many keys for its format");
  const auto block_count = static_cast<uint32_t>(blocks);

  const size_t bit_array_size_bytes =
      static_cast<size_t>(block_count) * format::block_size_bytes;
  std::string filter(format::header_size_bytes + bit_array_size_bytes +
                         format::checksum_size_bytes,
                     '\0');
  char* const header = filter.data();
  coding::EncodeFixed32(header + format::magic_offset, format::magic);
  header[format::version_offset] = static_cast<char>(format::version);
  header[format::probe_count_offset] = static_cast<char>(probe_count_);
  coding::EncodeFixed32(header + format::block_count_offset, block_count);
  coding::EncodeFixed64(header + format::hash_seed_offset, hash_seed_);

  auto* const bit_array =
      reinterpret_cast<unsigned char*>(header + format::header_size_bytes);
  for (const uint64_t hash : key_hashes_) {
    ProbeSequence probes(hash, block_count);
    unsigned char* const block = bit_array + probes.block_offset_bytes();
    for (unsigned probe = 0; probe < probe_count_; ++probe, probes.Next()) {
      block[probes.bit() / 8] |=
          static_cast<unsigned char>(1u << (probes.bit() % 8));
    }
  }

  const size_t checksum_offset = filter.size() - format::checksum_size_bytes;
  KVS_CHECK(checksum_offset ==
            format::header_size_bytes + bit_array_size_bytes);
  coding::EncodeFixed32(
      header + checksum_offset,
      crc32c::Mask(crc32c::Value(filter.data(), checksum_offset)));

  // Release the hashes (8 bytes per key) now rather than with the builder.
  std::vector<uint64_t>().swap(key_hashes_);
  return filter;
}

Status BloomFilterReader::Open(std::string_view bytes,
                               BloomFilterReader* reader) {
  const size_t size = bytes.size();
  if (size < format::filter_size_bytes_min) {
    return FilterCorruption(
        std::to_string(size) + " bytes is shorter than the smallest filter (" +
        std::to_string(format::filter_size_bytes_min) + " bytes)");
  }
  const char* const data = bytes.data();
  const uint32_t magic = coding::DecodeFixed32(data + format::magic_offset);
  if (magic != format::magic) {
    return FilterCorruption("bad magic " + Hex32(magic) + " (expected " +
                            Hex32(format::magic) + ", \"KVBF\")");
  }
  // The version is checked before the checksum: a filter written by a newer
  // build may place its checksum differently, and "unsupported version" is
  // the useful message then.
  const unsigned version =
      static_cast<unsigned char>(data[format::version_offset]);
  if (version != format::version) {
    return FilterCorruption("unsupported format version " +
                            std::to_string(version) + " (this build reads " +
                            std::to_string(format::version) + ")");
  }
  // The size is checked against the block count before the checksum, so that
  // a truncated filter is reported as such.
  const uint32_t block_count =
      coding::DecodeFixed32(data + format::block_count_offset);
  const uint64_t expected_size =
      format::header_size_bytes +
      uint64_t{block_count} * format::block_size_bytes +
      format::checksum_size_bytes;
  if (block_count == 0 || expected_size != size) {
    return FilterCorruption(
        std::to_string(block_count) + " blocks need " +
        std::to_string(expected_size) + " bytes but the filter has " +
        std::to_string(size) + (block_count == 0 ? " (at least 1 block)" : ""));
  }
  const size_t checksum_offset = size - format::checksum_size_bytes;
  const uint32_t stored_checksum =
      crc32c::Unmask(coding::DecodeFixed32(data + checksum_offset));
  const uint32_t actual_checksum = crc32c::Value(data, checksum_offset);
  if (stored_checksum != actual_checksum) {
    return FilterCorruption("checksum mismatch (stored " +
                            Hex32(stored_checksum) + ", computed " +
                            Hex32(actual_checksum) + ")");
  }
  // Beyond here a bad field means a writer bug, not a damaged device.
  const unsigned probe_count =
      static_cast<unsigned char>(data[format::probe_count_offset]);
  if (probe_count < format::probe_count_min ||
      probe_count > format::probe_count_max) {
    return FilterCorruption("probe count " + std::to_string(probe_count) +
                            " is outside [" +
                            std::to_string(format::probe_count_min) + ", " +
                            std::to_string(format::probe_count_max) + "]");
  }
  // Reserved bytes must be zero so that a later version can give them a
  // meaning that version 1 readers do not silently ignore.
  const auto is_zero = [](char byte) { return byte == 0; };
  if (!std::all_of(data + format::probe_count_offset + 1,
                   data + format::block_count_offset, is_zero) ||
      !std::all_of(data + format::block_count_offset + 4,
                   data + format::hash_seed_offset, is_zero) ||
      !std::all_of(data + format::reserved_offset,
                   data + format::header_size_bytes, is_zero)) {
    return FilterCorruption("reserved header bytes are not zero");
  }

  reader->blocks_ =
      reinterpret_cast<const unsigned char*>(data + format::header_size_bytes);
  reader->size_bytes_ = size;
  reader->block_count_ = block_count;
  reader->probe_count_ = probe_count;
  reader->hash_seed_ = coding::DecodeFixed64(data + format::hash_seed_offset);
  return Status::Ok();
}

bool BloomFilterReader::MayContain(std::string_view key) const {
  if (blocks_ == nullptr) {
    return true;  // no filter: nothing can be ruled out
  }
  const uint64_t hash = Hash64(key.data(), key.size(), hash_seed_);
  ProbeSequence probes(hash, block_count_);
  // Open checked that block_count_ blocks lie inside the bytes; the block
  // index is below block_count_ and every bit below 512.
  const unsigned char* const block = blocks_ + probes.block_offset_bytes();
  for (unsigned probe = 0; probe < probe_count_; ++probe, probes.Next()) {
    if ((block[probes.bit() / 8] & (1u << (probes.bit() % 8))) == 0) {
      return false;
    }
  }
  return true;
}

}  // namespace kvs::btree
