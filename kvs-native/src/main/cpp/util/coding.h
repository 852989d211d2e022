// Little-endian fixed-width and varint encoding of integers, used by every
// on-device and on-wire format. Decoders take the bytes available and fail
// (return false / nullptr) instead of reading past them: they parse
// untrusted input.

#ifndef KVS_UTIL_CODING_H_
#define KVS_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace kvs::coding {

inline void EncodeFixed16(char* out, uint16_t value) {
  std::memcpy(out, &value, sizeof(value));  // little-endian hosts only
}
inline void EncodeFixed32(char* out, uint32_t value) {
  std::memcpy(out, &value, sizeof(value));
}
inline void EncodeFixed64(char* out, uint64_t value) {
  std::memcpy(out, &value, sizeof(value));
}
inline uint16_t DecodeFixed16(const char* in) {
  uint16_t value;
  std::memcpy(&value, in, sizeof(value));
  return value;
}
inline uint32_t DecodeFixed32(const char* in) {
  uint32_t value;
  std::memcpy(&value, in, sizeof(value));
  return value;
}
inline uint64_t DecodeFixed64(const char* in) {
  uint64_t value;
  std::memcpy(&value, in, sizeof(value));
  return value;
}

inline void PutFixed16(std::string* out, uint16_t value) {
  char buffer[2];
  EncodeFixed16(buffer, value);
  out->append(buffer, sizeof(buffer));
}
inline void PutFixed32(std::string* out, uint32_t value) {
  char buffer[4];
  EncodeFixed32(buffer, value);
  out->append(buffer, sizeof(buffer));
}
inline void PutFixed64(std::string* out, uint64_t value) {
  char buffer[8];
  EncodeFixed64(buffer, value);
  out->append(buffer, sizeof(buffer));
}

inline constexpr size_t kVarint64BytesMax = 10;

// Writes `value` as a varint (7 bits per byte, high bit = more) at `out`,
// which must have kVarint64BytesMax bytes; returns the end.
inline char* EncodeVarint64(char* out, uint64_t value) {
  auto* p = reinterpret_cast<unsigned char*>(out);
  while (value >= 0x80) {
    *p++ = static_cast<unsigned char>(value | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<unsigned char>(value);
  return reinterpret_cast<char*>(p);
}

inline void PutVarint64(std::string* out, uint64_t value) {
  char buffer[kVarint64BytesMax];
  out->append(buffer, EncodeVarint64(buffer, value) - buffer);
}

// Decodes a varint from [p, limit); returns the byte after it, or nullptr if
// the input ends early or the varint is longer than 64 bits.
inline const char* DecodeVarint64(const char* p, const char* limit,
                                  uint64_t* value) {
  uint64_t result = 0;
  for (unsigned shift = 0; shift <= 63 && p < limit; shift += 7) {
    const auto byte = static_cast<unsigned char>(*p++);
    if (shift == 63 && byte > 1) {
      return nullptr;  // would overflow 64 bits
    }
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return p;
    }
  }
  return nullptr;
}

// Consumes a varint from the front of `input`.
inline bool GetVarint64(std::string_view* input, uint64_t* value) {
  const char* end =
      DecodeVarint64(input->data(), input->data() + input->size(), value);
  if (end == nullptr) {
    return false;
  }
  input->remove_prefix(static_cast<size_t>(end - input->data()));
  return true;
}

// Consumes a varint length and that many bytes from the front of `input`.
inline bool GetLengthPrefixed(std::string_view* input,
                              std::string_view* result) {
  uint64_t length;
  if (!GetVarint64(input, &length) || length > input->size()) {
    return false;
  }
  *result = input->substr(0, static_cast<size_t>(length));
  input->remove_prefix(static_cast<size_t>(length));
  return true;
}

inline void PutLengthPrefixed(std::string* out, std::string_view bytes) {
  PutVarint64(out, bytes.size());
  out->append(bytes);
}

// A list of integers: varint count, then varint elements.
inline void PutVarint64List(std::string* out,
                            const std::vector<uint64_t>& values) {
  PutVarint64(out, values.size());
  for (uint64_t value : values) {
    PutVarint64(out, value);
  }
}

// Consumes a list written by PutVarint64List. The count is bounded by the
// input (every element takes at least one byte), so a lying count cannot
// make it allocate beyond the input's size.
inline bool GetVarint64List(std::string_view* input,
                            std::vector<uint64_t>* values) {
  uint64_t count;
  if (!GetVarint64(input, &count) || count > input->size()) {
    return false;
  }
  values->resize(static_cast<size_t>(count));
  for (auto& value : *values) {
    if (!GetVarint64(input, &value)) {
      return false;
    }
  }
  return true;
}

// An 8-byte little-endian string (catalog values).
inline std::string Fixed64String(uint64_t value) {
  std::string out(8, '\0');
  EncodeFixed64(out.data(), value);
  return out;
}

// 16 lowercase hex digits: catalog key parts that sort like the number.
inline std::string Hex16(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) {
    out[static_cast<size_t>(i)] = kDigits[value & 0xf];
  }
  return out;
}

}  // namespace kvs::coding

#endif  // KVS_UTIL_CODING_H_
