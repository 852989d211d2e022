#include "testing/random_keys.h"

namespace kvs::testing {

std::string RandomBytes::Bytes(size_t size) {
  std::string result(size, '\0');
  for (auto& byte : result) {
    const uint64_t draw = Uniform(16);
    if (draw == 0) {
      byte = '\x00';
    } else if (draw == 1) {
      byte = '\xff';
    } else {
      byte = static_cast<char>(Uniform(256));
    }
  }
  return result;
}

std::string RandomBytes::Key(size_t min_size, size_t max_size) {
  return Bytes(min_size + Uniform(max_size - min_size + 1));
}

}  // namespace kvs::testing
