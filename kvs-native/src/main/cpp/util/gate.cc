#include "util/gate.h"

#include "util/check.h"

namespace kvs {

Gate::~Gate() { KVS_CHECK((state_.load() & ~kClosed) == 0); }

bool Gate::Enter() {
  const uint64_t before = state_.fetch_add(1, std::memory_order_acquire);
  if ((before & kClosed) == 0) return true;
  Leave();  // too late: the closer may be waiting for this count to fall
  return false;
}

void Gate::Leave() {
  const uint64_t before = state_.fetch_sub(1, std::memory_order_release);
  KVS_CHECK((before & ~kClosed) > 0);
  if (before == (kClosed | 1)) state_.notify_all();
}

void Gate::Close() {
  uint64_t state = state_.fetch_or(kClosed, std::memory_order_acq_rel);
  state |= kClosed;
  while (state != kClosed) {
    state_.wait(state, std::memory_order_acquire);
    state = state_.load(std::memory_order_acquire);
  }
}

bool Gate::closed() const {
  return (state_.load(std::memory_order_acquire) & kClosed) != 0;
}

}  // namespace kvs
