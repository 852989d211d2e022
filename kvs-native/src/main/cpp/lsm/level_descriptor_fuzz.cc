// libFuzzer target for LevelDescriptor::Decode, the parser of a level's
// catalog value (read back from the checkpoint and the redo log at open).
//
// Checked: no crash or sanitizer report on any input, and no allocation
// beyond what the input can describe; a decoded descriptor answers
// AllSegments, and re-encodes into bytes no longer than the input (the
// encoder writes minimal varints) that decode again and re-encode to the
// same bytes. The checks go through Encode rather than field by field, so
// that they hold as the descriptor gains fields.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lsm/level.h"
#include "util/check.h"

namespace {

using kvs::lsm::LevelDescriptor;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view encoded(reinterpret_cast<const char*>(data), size);
  LevelDescriptor descriptor;
  if (!LevelDescriptor::Decode(encoded, &descriptor).ok()) {
    return 0;
  }
  // Bounded by the input: every listed segment took at least one byte.
  KVS_CHECK(descriptor.AllSegments().size() <= size);

  const std::string reencoded = descriptor.Encode();
  KVS_CHECK_MSG(reencoded.size() <= encoded.size(),
                "re-encoding grew the descriptor");
  LevelDescriptor again;
  KVS_CHECK_MSG(LevelDescriptor::Decode(reencoded, &again).ok(),
                "an encoded descriptor does not decode");
  KVS_CHECK_MSG(again.Encode() == reencoded,
                "round trip changed the descriptor");
  KVS_CHECK(again.empty() == descriptor.empty());
  return 0;
}
