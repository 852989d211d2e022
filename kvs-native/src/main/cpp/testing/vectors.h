// Test helper: reads the shared test-vector files under testdata/vectors,
// the same files the Java tests read, so both sides check one truth.

#ifndef KVS_TESTING_VECTORS_H_
#define KVS_TESTING_VECTORS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kvs::testing {

struct Crc32cVector {
  std::string name;
  std::vector<uint8_t> input;
  uint32_t expected;
};

// Path of a file in the shared vector directory (compiled in by CMake).
std::string VectorPath(const std::string& file_name);

// Parses testdata/vectors/crc32c.txt. Aborts the test binary with a message
// on a malformed line: a broken vector file must never pass silently.
std::vector<Crc32cVector> LoadCrc32cVectors();

}  // namespace kvs::testing

#endif  // KVS_TESTING_VECTORS_H_
