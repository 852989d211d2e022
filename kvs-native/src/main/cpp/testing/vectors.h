// Test helper: reads the shared test-vector files under testdata/vectors,
// the same files the Java tests read, so both sides check one truth.

#ifndef KVS_TESTING_VECTORS_H_
#define KVS_TESTING_VECTORS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kvs::testing {

struct Crc32cVector {
  std::string name;
  std::vector<uint8_t> input;
  uint32_t expected;
};

struct WireVector {
  std::string name;
  bool request = false;  // else a reply
  std::string bytes;
  bool invalid = false;
  // Decoded fields as the file writes them (docs: the file's header).
  std::map<std::string, std::string> fields;
};

// Path of a file in the shared vector directory (compiled in by CMake).
std::string VectorPath(const std::string& file_name);

// Parses testdata/vectors/crc32c.txt. Aborts the test binary with a message
// on a malformed line: a broken vector file must never pass silently.
std::vector<Crc32cVector> LoadCrc32cVectors();

// Parses testdata/vectors/wire.txt, aborting on a malformed line.
std::vector<WireVector> LoadWireVectors();

// Lowercase hex of `bytes`, "-" for none (the vector files' notation).
std::string ToHex(std::string_view bytes);

}  // namespace kvs::testing

#endif  // KVS_TESTING_VECTORS_H_
