// Formats shared by the crash worker (crash_worker_main.cc) and the crash
// test (crash_test.cc, crash_check.h): the keys and self-describing values
// the worker writes, and the acknowledgement journal in which it records
// what it attempted and what the engine has guaranteed.
//
// Header-only on purpose: tools/ is not part of the library, and the two
// programs must agree on every byte. Only the C ABI (kvs/kvs.h) is used,
// for CRC32C, so the worker stays a pure C ABI client.

#ifndef KVS_TOOLS_CRASH_FORMAT_H_
#define KVS_TOOLS_CRASH_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kvs/kvs.h"

namespace kvs::crash {

// The region every worker writes to.
inline constexpr char kRegionName[] = "crash";

// Few enough keys that most puts overwrite a key written before, deletes hit
// live keys and compactions merge many versions of one key; enough that the
// live data (about 1 MiB) spans several L0 tables of the 1 MiB minimum.
inline constexpr uint32_t kKeyCount = 2000;

// The smallest L0 the C ABI accepts, so that compactions run every few
// thousand writes.
inline constexpr uint64_t kL0SizeBytes = 1u << 20;

// --- Little-endian coding (the C ABI offers none) --------------------------

inline void PutFixed32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
inline void PutFixed64(char* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}
inline uint32_t GetFixed32(const char* in) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = value << 8 | static_cast<uint8_t>(in[i]);
  return value;
}
inline uint64_t GetFixed64(const char* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | static_cast<uint8_t>(in[i]);
  return value;
}

// SplitMix64: a fast, well-mixed function of its input; everything derived
// from (key, seq) goes through it so the verifier can recompute it.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// --- Keys --------------------------------------------------------------------

// "crash/", the index as 4 big-endian bytes, then '\xff': 11 bytes that
// hold '\x00' (every index below 2^24) and '\xff', so a C-string or
// signed-char mistake anywhere in the engine shows up as a wrong key.
inline std::string KeyFor(uint32_t index) {
  std::string key = "crash/";
  for (int shift = 24; shift >= 0; shift -= 8) {
    key.push_back(static_cast<char>(index >> shift));
  }
  key.push_back('\xff');
  return key;
}
inline constexpr size_t kKeyBytes = 11;

// The index `key` was made from; false if KeyFor makes no such key.
inline bool DecodeKey(std::string_view key, uint32_t* index) {
  if (key.size() != kKeyBytes) return false;
  uint32_t decoded = 0;
  for (size_t i = 6; i < 10; ++i) {
    decoded = decoded << 8 | static_cast<uint8_t>(key[i]);
  }
  if (decoded >= kKeyCount || KeyFor(decoded) != key) return false;
  *index = decoded;
  return true;
}

// --- Values
// --------------------------------------------------------------------
//
// Every value names the write that produced it:
//
// | offset | size | field    | meaning                                       |
// |--------|------|----------|-----------------------------------------------|
// | 0      | 4    | magic    | "CRV1"                                        |
// | 4      | 4    | key      | index of the key it was written under         |
// | 8      | 8    | seq      | the worker's operation sequence number        |
// | 16     | 4    | size     | total value bytes                             |
// | 20     | 4    | crc      | CRC32C of [0, 20) then [24, size)             |
// | 24     | n    | filler   | bytes derived from (key, seq)                 |
//
// Its size, and so its placement, is a function of (key, seq): half of the
// values make small KVs (<= 119 bytes with the key), three in eight medium
// ones (120..1023) and one in eight large ones (>= 1024), so every write path
// and level placement is exercised.

inline constexpr char kValueMagic[4] = {'C', 'R', 'V', '1'};
inline constexpr size_t kValueHeaderBytes = 24;

inline size_t ValueSizeFor(uint32_t key, uint64_t seq) {
  const uint64_t h = Mix(seq * kKeyCount + key);
  const uint64_t category = h % 8;
  const uint64_t jitter = (h >> 8) % 1024;
  if (category < 4) return kValueHeaderBytes + jitter % 40;  // 24..63
  if (category < 7) return 200 + jitter % 600;               // 200..799
  return 2048 + jitter * 2;                                  // 2048..4094
}
static_assert(kKeyBytes + kValueHeaderBytes + 39 <= 119, "small stays small");
static_assert(kKeyBytes + 200 > 119 && kKeyBytes + 799 <= 1023, "medium");
static_assert(kKeyBytes + 2048 >= 1024, "large stays large");

inline uint32_t ValueChecksum(std::string_view value) {
  uint32_t crc = kvs_crc32c_extend(0, value.data(), 20);
  return kvs_crc32c_extend(crc, value.data() + kValueHeaderBytes,
                           value.size() - kValueHeaderBytes);
}

// The value the worker puts for operation `seq` on key `key`.
inline std::string EncodeValue(uint32_t key, uint64_t seq) {
  std::string value(ValueSizeFor(key, seq), '\0');
  char* out = value.data();
  for (int i = 0; i < 4; ++i) out[i] = kValueMagic[i];
  PutFixed32(out + 4, key);
  PutFixed64(out + 8, seq);
  PutFixed32(out + 16, static_cast<uint32_t>(value.size()));
  uint64_t state = Mix(seq ^ (uint64_t{key} << 48));
  for (size_t i = kValueHeaderBytes; i < value.size(); i += 8) {
    state = Mix(state);
    for (size_t b = 0; b < 8 && i + b < value.size(); ++b) {
      out[i + b] = static_cast<char>(state >> (8 * b));
    }
  }
  PutFixed32(out + 20, ValueChecksum(value));
  return value;
}

// Reads the (key, seq) a value claims. Returns "" if the value is intact
// (its header and checksum hold and it is byte for byte what EncodeValue
// makes for that (key, seq)); otherwise why not.
inline std::string DecodeValue(std::string_view value, uint32_t* key,
                               uint64_t* seq) {
  if (value.size() < kValueHeaderBytes) {
    return "shorter than a value header";
  }
  if (value.substr(0, 4) != std::string_view(kValueMagic, 4)) {
    return "no value magic";
  }
  if (GetFixed32(value.data() + 16) != value.size()) {
    return "size field " + std::to_string(GetFixed32(value.data() + 16)) +
           " does not match its length";
  }
  if (GetFixed32(value.data() + 20) != ValueChecksum(value)) {
    return "checksum mismatch";
  }
  *key = GetFixed32(value.data() + 4);
  *seq = GetFixed64(value.data() + 8);
  if (*key >= kKeyCount || EncodeValue(*key, *seq) != value) {
    return "checksum holds but the bytes are not what (key " +
           std::to_string(*key) + ", seq " + std::to_string(*seq) + ") encodes";
  }
  return "";
}

// --- Acknowledgement journal ------------------------------------------------
//
// An append-only file of 32-byte records, written by the worker with one
// write(2) each, read by the test after the worker is killed:
//
// | offset | size | field  | meaning                                        |
// |--------|------|--------|------------------------------------------------|
// | 0      | 4    | magic  | "CRJ2"                                         |
// | 4      | 1    | type   | JournalType                                    |
// | 5      | 3    | zero   |                                                |
// | 8      | 8    | seq    | operation sequence number                      |
// | 16     | 8    | micros | CLOCK_MONOTONIC in microseconds, read just     |
// |        |      |        | before the record was written                  |
// | 24     | 4    | key    | key index (attempts), else 0                   |
// | 28     | 4    | crc    | CRC32C of [0, 28)                              |
//
// An attempt is journalled before the operation is issued, so every
// operation that can have reached the engine is known; a guarantee is
// journalled after the engine returned it. Records are 32 bytes and start
// at multiples of 32, so none straddles a page: a write cut short by
// SIGKILL leaves at most a short tail, never a torn record in the middle.
//
// The worker is single-threaded and attempts an operation only once the
// one before returned OK, so an attempt record also says that the attempt
// before it was acknowledged; only the last attempt in a journal may or may
// not have been. The timestamps date both, which is how the test measures
// how old the acknowledged writes a kill lost were.

inline constexpr size_t kJournalRecordBytes = 32;
inline constexpr char kJournalMagic[4] = {'C', 'R', 'J', '2'};

enum class JournalType : uint8_t {
  kPutAttempted = 1,     // put of EncodeValue(key, seq) about to be issued
  kDeleteAttempted = 2,  // delete of `key` about to be issued
  kAcknowledged = 3,     // sync mode: operation `seq` returned OK (durable)
  kSynced = 4,           // flush mode: kvs_region_sync returned OK after
                         // operation `seq`: every attempt <= seq is durable
};

struct JournalRecord {
  JournalType type = JournalType::kPutAttempted;
  uint32_t key = 0;
  uint64_t seq = 0;
  uint64_t micros = 0;
};

inline void EncodeJournalRecord(const JournalRecord& record,
                                char out[kJournalRecordBytes]) {
  for (size_t i = 0; i < kJournalRecordBytes; ++i) out[i] = 0;
  for (int i = 0; i < 4; ++i) out[i] = kJournalMagic[i];
  out[4] = static_cast<char>(record.type);
  PutFixed64(out + 8, record.seq);
  PutFixed64(out + 16, record.micros);
  PutFixed32(out + 24, record.key);
  PutFixed32(out + 28, kvs_crc32c_extend(0, out, 28));
}

// False if `in` is not an intact record.
inline bool DecodeJournalRecord(const char in[kJournalRecordBytes],
                                JournalRecord* record) {
  if (std::string_view(in, 4) != std::string_view(kJournalMagic, 4) ||
      GetFixed32(in + 28) != kvs_crc32c_extend(0, in, 28)) {
    return false;
  }
  const uint8_t type = static_cast<uint8_t>(in[4]);
  if (type < 1 || type > 4) {
    return false;
  }
  record->type = static_cast<JournalType>(type);
  record->seq = GetFixed64(in + 8);
  record->micros = GetFixed64(in + 16);
  record->key = GetFixed32(in + 24);
  return true;
}

}  // namespace kvs::crash

#endif  // KVS_TOOLS_CRASH_FORMAT_H_
