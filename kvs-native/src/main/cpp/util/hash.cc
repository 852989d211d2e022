#include "util/hash.h"

#include "util/coding.h"

namespace kvs {
namespace {

// Odd 64-bit constants with about half of their bits set, taken from the
// fractional parts of irrational numbers so that nothing is hidden in them:
// the golden ratio, e, sqrt(2) and sqrt(3). A multiply by an odd constant is
// invertible, and spreads each bit to every bit above it.
constexpr uint64_t kGoldenRatio = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kE = 0xb7e151628aed2a6bull;
constexpr uint64_t kSqrt2 = 0x6a09e667f3bcc909ull;
constexpr uint64_t kSqrt3 = 0xbb67ae8584caa73bull;

constexpr size_t kWordSizeBytes = 8;

// One step of the absorbing loop. The multiply only carries information
// upwards; the xorshift brings the well-mixed high half back down, so that the
// next word's multiply spreads it again.
inline uint64_t Absorb(uint64_t state, uint64_t word) {
  state = (state ^ word) * kE;
  return state ^ (state >> 29);
}

// Makes every state bit influence every output bit (two rounds of
// xorshift-multiply, then a last xorshift so that the high bits of the final
// product reach the low output bits).
inline uint64_t Finalize(uint64_t state) {
  state ^= state >> 31;
  state *= kSqrt2;
  state ^= state >> 28;
  state *= kSqrt3;
  return state ^ (state >> 32);
}

// The last 1..7 bytes as one word, without reading outside tail[0..size).
// Together with the length, which went into the initial state, the word
// determines the bytes: for 4..7 bytes two overlapping 4-byte reads cover all
// of them; for 1..3 bytes the first, middle and last byte do.
inline uint64_t LoadTail(const unsigned char* tail, size_t size) {
  if (size >= 4) {
    const uint64_t low =
        coding::DecodeFixed32(reinterpret_cast<const char*>(tail));
    const uint64_t high =
        coding::DecodeFixed32(reinterpret_cast<const char*>(tail + size - 4));
    return low | (high << 32);
  }
  return uint64_t{tail[0]} | (uint64_t{tail[size / 2]} << 8) |
         (uint64_t{tail[size - 1]} << 16);
}

}  // namespace

uint64_t Hash64(const void* data, size_t size, uint64_t seed) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  // The seed and then the length are absorbed like words. Absorb is
  // invertible in its word, so distinct seeds give distinct states, and for
  // one seed distinct lengths do: inputs that differ only by trailing zero
  // bytes (which the tail word cannot tell apart) start from different states.
  uint64_t state = Absorb(Absorb(kGoldenRatio, seed), size);
  while (size >= kWordSizeBytes) {
    state = Absorb(state,
                   coding::DecodeFixed64(reinterpret_cast<const char*>(bytes)));
    bytes += kWordSizeBytes;
    size -= kWordSizeBytes;
  }
  if (size > 0) {
    state = Absorb(state, LoadTail(bytes, size));
  }
  return Finalize(state);
}

}  // namespace kvs
