// libFuzzer target for RegionOrigin::Decode, the parser of a split region's
// origin catalog entry (its key bounds and ancestors).
//
// Checked: no crash or sanitizer report on any input, and no allocation
// beyond what the input can describe; a decoded origin re-encodes into bytes
// that decode to the same origin, no longer than the input (the encoder
// writes minimal varints), and its bounds are usable: Contains agrees with
// the clamps a scan's bounds go through.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lsm/key_bounds.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  kvs::lsm::RegionOrigin origin;
  if (!kvs::lsm::RegionOrigin::Decode(input, &origin).ok()) {
    return 0;
  }
  const std::string encoded = origin.Encode();
  KVS_CHECK_MSG(encoded.size() <= input.size(), "re-encoding grew the origin");
  kvs::lsm::RegionOrigin again;
  KVS_CHECK_MSG(kvs::lsm::RegionOrigin::Decode(encoded, &again).ok(),
                "an encoded origin does not decode");
  KVS_CHECK_MSG(
      again.bounds == origin.bounds && again.ancestors == origin.ancestors,
      "round trip changed the origin");
  const kvs::lsm::KeyBounds& bounds = origin.bounds;
  const std::optional<std::string> lower = bounds.ClampLower(std::nullopt);
  KVS_CHECK(lower.value_or("") == bounds.lower);
  KVS_CHECK(bounds.ClampUpper(std::nullopt) == bounds.upper);
  KVS_CHECK(!bounds.upper.has_value() || bounds.lower >= *bounds.upper ||
            bounds.Contains(bounds.lower));
  return 0;
}
