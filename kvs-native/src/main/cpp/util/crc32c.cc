#include "util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace kvs::crc32c {
namespace {

constexpr uint32_t kReflectedPolynomial = 0x82F63B78u;

// kTables[0] is the classic byte-at-a-time table; kTables[k][b] is the CRC of
// byte b followed by k zero bytes, which lets the portable loop consume eight
// bytes per step (slicing-by-8).
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc >> 1) ^ ((crc & 1u) ? kReflectedPolynomial : 0u);
    }
    tables[0][byte] = crc;
  }
  for (size_t k = 1; k < tables.size(); ++k) {
    for (uint32_t byte = 0; byte < 256; ++byte) {
      const uint32_t previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xffu];
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();
// Byte 0x80 shifts out its only set bit on the eighth step: the polynomial.
static_assert(kTables[0][0x80] == kReflectedPolynomial, "table generation");

inline uint32_t LoadLittleEndian32(const uint8_t* p) {
  uint32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;  // x86-64 and aarch64 Linux are little-endian
}

bool DetectHardware() {
#if defined(__x86_64__)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  return (ecx & bit_SSE4_2) != 0;
#else
  return false;
#endif
}

const bool kHardware = DetectHardware();

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t state = ~crc;
  while (size >= 8) {
    const uint32_t low = LoadLittleEndian32(p) ^ state;
    const uint32_t high = LoadLittleEndian32(p + 4);
    state = kTables[7][low & 0xff] ^ kTables[6][(low >> 8) & 0xff] ^
            kTables[5][(low >> 16) & 0xff] ^ kTables[4][low >> 24] ^
            kTables[3][high & 0xff] ^ kTables[2][(high >> 8) & 0xff] ^
            kTables[1][(high >> 16) & 0xff] ^ kTables[0][high >> 24];
    p += 8;
    size -= 8;
  }
  while (size > 0) {
    state = (state >> 8) ^ kTables[0][(state ^ *p) & 0xff];
    ++p;
    --size;
  }
  return ~state;
}

#if defined(__x86_64__)
namespace {

// The crc32 instruction has a latency of three cycles but a throughput of
// one per cycle, so the hardware path runs three independent streams over
// three adjacent blocks and then joins them. Joining uses linearity: with raw
// (unconditioned) states, crc(A ++ B) = Z(crc(A), |B|) ^ crc0(B), where Z
// appends |B| zero bytes and crc0 starts from state 0. Z for a fixed length
// is a linear map on 32 bits, tabulated byte by byte (4 x 256 entries).
constexpr size_t kLongStreamBytes = 8192;  // per stream; blocks of 24 KiB
constexpr size_t kShortStreamBytes = 256;  // per stream; blocks of 768 B
static_assert(kLongStreamBytes % 8 == 0 && kShortStreamBytes % 8 == 0);

struct ZeroExtendTable {
  uint32_t by_byte[4][256];
};

__attribute__((target("sse4.2"))) uint32_t AppendZerosRaw(uint32_t state,
                                                          size_t bytes) {
  uint64_t wide = state;
  for (size_t i = 0; i < bytes; i += 8) {
    wide = _mm_crc32_u64(wide, 0);
  }
  return static_cast<uint32_t>(wide);
}

ZeroExtendTable MakeZeroExtendTable(size_t bytes) {
  uint32_t basis[32];
  for (int bit = 0; bit < 32; ++bit) {
    basis[bit] = AppendZerosRaw(1u << bit, bytes);
  }
  ZeroExtendTable table{};
  for (int lane = 0; lane < 4; ++lane) {
    for (uint32_t byte = 0; byte < 256; ++byte) {
      uint32_t image = 0;
      for (int bit = 0; bit < 8; ++bit) {
        if ((byte >> bit) & 1u) {
          image ^= basis[lane * 8 + bit];
        }
      }
      table.by_byte[lane][byte] = image;
    }
  }
  return table;
}

inline uint32_t ZeroExtend(const ZeroExtendTable& table, uint32_t state) {
  return table.by_byte[0][state & 0xff] ^
         table.by_byte[1][(state >> 8) & 0xff] ^
         table.by_byte[2][(state >> 16) & 0xff] ^ table.by_byte[3][state >> 24];
}

struct HardwareTables {
  ZeroExtendTable long_stream;
  ZeroExtendTable short_stream;
};

const HardwareTables* MakeHardwareTables() {
  if (!kHardware) {
    return nullptr;
  }
  static const HardwareTables tables{MakeZeroExtendTable(kLongStreamBytes),
                                     MakeZeroExtendTable(kShortStreamBytes)};
  return &tables;
}

const HardwareTables* const kHardwareTables = MakeHardwareTables();

// Consumes as many blocks of 3 x stream_bytes as fit, three streams at once.
__attribute__((target("sse4.2"))) uint64_t ThreeStreams(
    uint64_t state, const uint8_t*& p, size_t& size, size_t stream_bytes,
    const ZeroExtendTable& table) {
  while (size >= 3 * stream_bytes) {
    uint64_t first = state, second = 0, third = 0;
    for (size_t i = 0; i < stream_bytes; i += 8) {
      uint64_t a, b, c;
      std::memcpy(&a, p + i, 8);
      std::memcpy(&b, p + stream_bytes + i, 8);
      std::memcpy(&c, p + 2 * stream_bytes + i, 8);
      first = _mm_crc32_u64(first, a);
      second = _mm_crc32_u64(second, b);
      third = _mm_crc32_u64(third, c);
    }
    const uint32_t joined =
        ZeroExtend(table, ZeroExtend(table, static_cast<uint32_t>(first)) ^
                              static_cast<uint32_t>(second)) ^
        static_cast<uint32_t>(third);
    state = joined;
    p += 3 * stream_bytes;
    size -= 3 * stream_bytes;
  }
  return state;
}

}  // namespace

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc,
                                                          const void* data,
                                                          size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t state = ~crc;
  // Align to 8 bytes so no 64-bit load straddles two cache lines.
  while (size > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    state = _mm_crc32_u8(static_cast<uint32_t>(state), *p);
    ++p;
    --size;
  }
  if (kHardwareTables != nullptr) {
    state = ThreeStreams(state, p, size, kLongStreamBytes,
                         kHardwareTables->long_stream);
    state = ThreeStreams(state, p, size, kShortStreamBytes,
                         kHardwareTables->short_stream);
  }
  while (size >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    state = _mm_crc32_u64(state, word);
    p += 8;
    size -= 8;
  }
  while (size > 0) {
    state = _mm_crc32_u8(static_cast<uint32_t>(state), *p);
    ++p;
    --size;
  }
  return ~static_cast<uint32_t>(state);
}
#else
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size) {
  return ExtendPortable(crc, data, size);
}
#endif

bool IsHardwareAccelerated() { return kHardware; }

uint32_t Extend(uint32_t crc, const void* data, size_t size) {
  return kHardware ? ExtendHardware(crc, data, size)
                   : ExtendPortable(crc, data, size);
}

}  // namespace kvs::crc32c
