// KeyBounds: the keys a region serves, [lower, upper): every key when lower
// is empty and upper absent (a region that was never split). A region split
// from another (Engine::SplitRegion) keeps its bounds in its catalog entry
// "r/<region>/origin" (Region::OriginCatalogKey), with the ids of the
// regions it descends from, whose log segments it may hold:
//
// | field     | encoding                                                |
// |-----------|---------------------------------------------------------|
// | version   | varint, 1                                               |
// | lower     | varint length, bytes                                    |
// | has_upper | one byte, 0 or 1                                        |
// | upper     | varint length, bytes (present when has_upper is 1)      |
// | ancestors | varint count, varint region ids (the parent last)       |

#ifndef KVS_LSM_KEY_BOUNDS_H_
#define KVS_LSM_KEY_BOUNDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace kvs::lsm {

struct KeyBounds {
  std::string lower;
  std::optional<std::string> upper;

  bool unbounded() const { return lower.empty() && !upper.has_value(); }
  bool Contains(std::string_view key) const {
    return key >= std::string_view(lower) &&
           (!upper.has_value() || key < std::string_view(*upper));
  }
  // Whether `key` splits these bounds into two non-empty parts: above the
  // lower bound (so the part below holds a key) and below the upper.
  bool SplitsAt(std::string_view key) const {
    return key > std::string_view(lower) &&
           (!upper.has_value() || key < std::string_view(*upper));
  }
  // The part below `key`, and the part at or above it.
  KeyBounds Below(std::string_view key) const {
    return {lower, std::string(key)};
  }
  KeyBounds AtOrAbove(std::string_view key) const {
    return {std::string(key), upper};
  }
  // The tighter of `bound` and the lower bound (none if both are none).
  std::optional<std::string> ClampLower(std::optional<std::string> bound) const;
  std::optional<std::string> ClampUpper(std::optional<std::string> bound) const;
  bool operator==(const KeyBounds& other) const {
    return lower == other.lower && upper == other.upper;
  }
};

// What a split region's origin entry holds.
struct RegionOrigin {
  KeyBounds bounds;
  std::vector<uint64_t> ancestors;  // the parent last

  std::string Encode() const;
  // Corruption for malformed bytes.
  static Status Decode(std::string_view encoded, RegionOrigin* origin);
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_KEY_BOUNDS_H_
