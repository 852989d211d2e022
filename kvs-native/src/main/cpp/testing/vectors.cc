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

std::vector<WireVector> LoadWireVectors() {
  std::ifstream file(VectorPath("wire.txt"));
  KVS_CHECK_MSG(file.good(), "cannot open wire.txt");
  std::vector<WireVector> vectors;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::istringstream in(line);
    WireVector vector;
    std::string kind, hex, field;
    in >> vector.name >> kind >> hex;
    KVS_CHECK_MSG(kind == "request" || kind == "reply",
                  "wire vector kind must be request or reply");
    vector.request = kind == "request";
    const std::vector<uint8_t> bytes = ParseHex(hex);
    vector.bytes.assign(bytes.begin(), bytes.end());
    while (in >> field) {
      if (field == "invalid") {
        vector.invalid = true;
        continue;
      }
      const size_t equals = field.find('=');
      KVS_CHECK_MSG(equals != std::string::npos, "wire vector field without =");
      vector.fields[field.substr(0, equals)] = field.substr(equals + 1);
    }
    KVS_CHECK_MSG(vector.invalid != !vector.fields.empty(),
                  "a wire vector is either invalid or has fields");
    vectors.push_back(std::move(vector));
  }
  return vectors;
}

std::string ToHex(std::string_view bytes) {
  if (bytes.empty()) {
    return "-";
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const char c : bytes) {
    hex.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    hex.push_back(kDigits[static_cast<uint8_t>(c) & 15]);
  }
  return hex;
}

}  // namespace kvs::testing
