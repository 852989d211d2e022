// libFuzzer target for BloomFilterReader::Open, the parser of filter bytes
// read from the device. Every input is tried twice: as given, and with its
// last four bytes replaced by the right checksum, so that the fuzzer also
// reaches the field checks behind the checksum and MayContain on filters it
// made up. Any crash, sanitizer report or out-of-bounds read is a bug.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "btree/bloom_filter.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace {

void OpenAndProbe(std::string_view bytes) {
  kvs::btree::BloomFilterReader reader;
  if (!kvs::btree::BloomFilterReader::Open(bytes, &reader).ok()) {
    return;
  }
  // Keys of several lengths (each tail case of the hash), including the
  // input's own bytes, and \x00 / \xff.
  const std::string_view keys[] = {
      std::string_view(),
      std::string_view("\x00", 1),
      "\xff\xff\xff",
      "key00042",
      "a key that spans several 8-byte words",
      bytes.substr(0, 16),
  };
  for (const std::string_view key : keys) {
    (void)reader.MayContain(key);
  }
  if (reader.SizeBytes() != bytes.size()) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  OpenAndProbe(bytes);
  if (size >= 4) {
    std::string resealed(bytes);
    const size_t checksum_offset = size - 4;
    kvs::coding::EncodeFixed32(resealed.data() + checksum_offset,
                               kvs::crc32c::Mask(kvs::crc32c::Value(
                                   resealed.data(), checksum_offset)));
    OpenAndProbe(resealed);
  }
  return 0;
}
