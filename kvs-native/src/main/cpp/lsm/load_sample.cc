#include "lsm/load_sample.h"

#include <algorithm>

namespace kvs::lsm {

void LoadSample::Keep(std::string_view key) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (keys_.size() < kKeys) {
    keys_.emplace_back(key);
    return;
  }
  keys_[next_].assign(key.data(), key.size());
  next_ = (next_ + 1) % kKeys;
}

bool LoadSample::Median(const KeyBounds& bounds, std::string* key) const {
  std::vector<std::string> inside;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    inside.reserve(keys_.size());
    for (const std::string& each : keys_) {
      if (bounds.Contains(each)) inside.push_back(each);
    }
  }
  if (inside.size() < kMin) return false;
  std::sort(inside.begin(), inside.end());
  // The first key of the upper half that the bounds split at: requests for
  // the region's lowest key all stay below any split.
  for (size_t i = inside.size() / 2; i < inside.size(); ++i) {
    if (bounds.SplitsAt(inside[i])) {
      *key = inside[i];
      return true;
    }
  }
  return false;
}

size_t LoadSample::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return keys_.size();
}

}  // namespace kvs::lsm
