// A growable set of segment numbers as a bitmap, with a roving search for
// free segments. Not thread-safe; the Volume guards it.

#ifndef KVS_ALLOC_SEGMENT_BITMAP_H_
#define KVS_ALLOC_SEGMENT_BITMAP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvs::alloc {

class SegmentBitmap {
 public:
  // Segments [0, capacity) exist; more may be added with Grow.
  explicit SegmentBitmap(uint64_t capacity = 0) { Grow(capacity); }

  uint64_t capacity() const { return capacity_; }
  void Grow(uint64_t capacity);

  bool Contains(uint64_t segment) const {
    return segment < capacity_ &&
           ((words_[segment / 64] >> (segment % 64)) & 1);
  }
  void Insert(uint64_t segment);
  void Erase(uint64_t segment);
  uint64_t count() const { return count_; }

  // The first segment >= `start` not in the set (wrapping around), or none.
  std::optional<uint64_t> FindAbsent(uint64_t start) const;

  // Serialization for checkpoints: capacity, then the words.
  void EncodeTo(std::string* out) const;
  // Consumes the encoding from the front of `input`; false if malformed.
  bool DecodeFrom(std::string_view* input);

  bool operator==(const SegmentBitmap& other) const {
    return capacity_ == other.capacity_ && words_ == other.words_;
  }

 private:
  std::vector<uint64_t> words_;
  uint64_t capacity_ = 0;
  uint64_t count_ = 0;
};

}  // namespace kvs::alloc

#endif  // KVS_ALLOC_SEGMENT_BITMAP_H_
