// A heap buffer aligned for direct I/O.
//
// Owns its memory; movable, not copyable. Not thread-safe.

#ifndef KVS_IO_ALIGNED_BUFFER_H_
#define KVS_IO_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "util/check.h"
#include "util/limits.h"

namespace kvs::io {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // `size` is rounded up to the alignment; the memory is zeroed.
  explicit AlignedBuffer(size_t size) { Resize(size); }

  void Resize(size_t size) {
    const size_t rounded = RoundUp(size);
    void* memory =
        rounded == 0 ? nullptr
                     : std::aligned_alloc(limits::io_alignment_bytes, rounded);
    KVS_CHECK_MSG(rounded == 0 || memory != nullptr, "out of memory");
    if (memory != nullptr) {
      std::memset(memory, 0, rounded);
    }
    data_.reset(static_cast<char*>(memory));
    size_ = rounded;
  }

  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::string_view view() const { return {data_.get(), size_}; }
  std::string_view view(size_t length) const {
    KVS_CHECK(length <= size_);
    return {data_.get(), length};
  }

  static size_t RoundUp(size_t size) {
    return (size + limits::io_alignment_bytes - 1) &
           ~(limits::io_alignment_bytes - 1);
  }

 private:
  struct Free {
    void operator()(char* memory) const { std::free(memory); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

}  // namespace kvs::io

#endif  // KVS_IO_ALIGNED_BUFFER_H_
