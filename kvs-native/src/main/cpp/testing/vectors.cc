#include "testing/vectors.h"

#include <fstream>
#include <sstream>

#include "util/check.h"

namespace kvs::testing {
namespace {

std::vector<uint8_t> ParseHex(const std::string& hex) {
  std::vector<uint8_t> bytes;
  if (hex == "-") {
    return bytes;
  }
  KVS_CHECK_MSG(hex.size() % 2 == 0, "odd number of hex digits");
  for (size_t i = 0; i < hex.size(); i += 2) {
    bytes.push_back(
        static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

}  // namespace

std::string VectorPath(const std::string& file_name) {
  return std::string(KVS_VECTORS_DIR) + "/" + file_name;
}

std::vector<Crc32cVector> LoadCrc32cVectors() {
  std::ifstream file(VectorPath("crc32c.txt"));
  KVS_CHECK_MSG(file.good(), "cannot open crc32c.txt");
  std::vector<Crc32cVector> vectors;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream fields(line);
    std::string name, input, expected;
    fields >> name >> input >> expected;
    KVS_CHECK_MSG(!expected.empty(), "malformed vector line");
    vectors.push_back(
        {name, ParseHex(input),
         static_cast<uint32_t>(std::stoul(expected, nullptr, 16))});
  }
  return vectors;
}

}  // namespace kvs::testing
