#include "lsm/key_bounds.h"

#include "util/coding.h"

namespace kvs::lsm {
namespace {

constexpr uint64_t kOriginVersion = 1;
// More ancestors than any chain of splits produces: a bound on what a
// damaged entry can make Decode allocate.
constexpr uint64_t kAncestorsMax = 4096;

}  // namespace

std::optional<std::string> KeyBounds::ClampLower(
    std::optional<std::string> bound) const {
  if (lower.empty()) return bound;
  if (!bound.has_value() || *bound < lower) return lower;
  return bound;
}

std::optional<std::string> KeyBounds::ClampUpper(
    std::optional<std::string> bound) const {
  if (!upper.has_value()) return bound;
  if (!bound.has_value() || *upper < *bound) return upper;
  return bound;
}

std::string RegionOrigin::Encode() const {
  std::string out;
  coding::PutVarint64(&out, kOriginVersion);
  coding::PutLengthPrefixed(&out, bounds.lower);
  out.push_back(bounds.upper.has_value() ? 1 : 0);
  if (bounds.upper.has_value()) coding::PutLengthPrefixed(&out, *bounds.upper);
  coding::PutVarint64List(&out, ancestors);
  return out;
}

Status RegionOrigin::Decode(std::string_view encoded, RegionOrigin* origin) {
  *origin = {};
  uint64_t version = 0;
  std::string_view lower, upper;
  const Status malformed = Status::Corruption("malformed region origin");
  if (!coding::GetVarint64(&encoded, &version) || version != kOriginVersion ||
      !coding::GetLengthPrefixed(&encoded, &lower) || encoded.empty()) {
    return malformed;
  }
  const char has_upper = encoded[0];
  encoded.remove_prefix(1);
  if (has_upper != 0 && has_upper != 1) return malformed;
  if (has_upper == 1) {
    if (!coding::GetLengthPrefixed(&encoded, &upper)) return malformed;
    origin->bounds.upper = std::string(upper);
  }
  origin->bounds.lower = std::string(lower);
  if (!coding::GetVarint64List(&encoded, &origin->ancestors) ||
      !encoded.empty() || origin->ancestors.size() > kAncestorsMax) {
    return malformed;
  }
  return Status::Ok();
}

}  // namespace kvs::lsm
