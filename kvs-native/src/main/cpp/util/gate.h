// Gate: keeps an object alive for the work that uses it (after Seastar's
// gate). Work enters before it touches the object and leaves when done; the
// owner closes the gate before it frees the object, which stops new work
// from entering and waits for the work inside to leave. Lifetimes are owned
// this way, not promised in comments.
//
// Thread safety: every method may be called from any thread. Enter and
// Leave are lock-free (one atomic read-modify-write each); Close blocks.

#ifndef KVS_UTIL_GATE_H_
#define KVS_UTIL_GATE_H_

#include <atomic>
#include <cstdint>

namespace kvs {

class Gate {
 public:
  Gate() = default;
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  // Requires no work inside (Close first).
  ~Gate();

  // Lets one piece of work in; false once the gate is closed (the object
  // is going: do not touch it).
  bool Enter();
  // The work that entered is done with the object.
  void Leave();
  // Lets no more work in and returns once the work inside has left. Must
  // not be called from work inside (it would wait for itself).
  void Close();
  bool closed() const;

  // Enter and Leave as a scope: `entered()` says whether it got in.
  class Pass {
   public:
    explicit Pass(Gate* gate) : gate_(gate->Enter() ? gate : nullptr) {}
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    ~Pass() { Release(); }
    bool entered() const { return gate_ != nullptr; }
    // Leaves early (once the object is no longer needed).
    void Release() {
      if (gate_ != nullptr) gate_->Leave();
      gate_ = nullptr;
    }

   private:
    Gate* gate_;
  };

 private:
  static constexpr uint64_t kClosed = uint64_t{1} << 63;
  // kClosed once closed, plus the count of work inside.
  std::atomic<uint64_t> state_{0};
};

}  // namespace kvs

#endif  // KVS_UTIL_GATE_H_
