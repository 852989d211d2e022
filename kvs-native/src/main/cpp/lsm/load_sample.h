// LoadSample: the keys a region's recent requests named, for a split by
// load (issue 28: "at a key the primary picks ... by load for a load
// split"). One request in kEvery of each kind (put, delete, get) leaves its
// key -- the caller's own request counter decides, so the sample costs the
// hot path nothing but that modulo -- in a ring of the last kKeys keys.
// Median() is the key the sampled requests split in half: below it as many
// requests as from it on.
//
// Thread safety: Note and Median may run on many threads at once (a mutex,
// taken by one request in kEvery).

#ifndef KVS_LSM_LOAD_SAMPLE_H_
#define KVS_LSM_LOAD_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lsm/key_bounds.h"

namespace kvs::lsm {

class LoadSample {
 public:
  static constexpr uint64_t kEvery = 16;
  static constexpr size_t kKeys = 1024;
  // Fewer sampled keys inside the bounds than this: no median (the load is
  // too thin to say where it lies).
  static constexpr size_t kMin = 64;

  // Keeps `key` if `count` (the caller's count of such requests, before
  // this one) is a multiple of kEvery.
  void Note(uint64_t count, std::string_view key) {
    if (count % kEvery == 0) Keep(key);
  }

  // The median of the sampled keys inside `bounds` that `bounds` can split
  // at (above its lower bound): false with fewer than kMin of them.
  bool Median(const KeyBounds& bounds, std::string* key) const;

  // Keys held now (tests).
  size_t size() const;

 private:
  void Keep(std::string_view key);

  mutable std::mutex mutex_;
  std::vector<std::string> keys_;  // a ring once full, under mutex_
  size_t next_ = 0;                // where the next key goes once full
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_LOAD_SAMPLE_H_
