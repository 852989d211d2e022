#include "alloc/segment_bitmap.h"

#include <bit>

#include "util/check.h"
#include "util/coding.h"

namespace kvs::alloc {

void SegmentBitmap::Grow(uint64_t capacity) {
  if (capacity <= capacity_) {
    return;
  }
  capacity_ = capacity;
  words_.resize((capacity + 63) / 64, 0);
}

void SegmentBitmap::Insert(uint64_t segment) {
  KVS_CHECK_MSG(segment < capacity_, "segment beyond the volume");
  uint64_t& word = words_[segment / 64];
  const uint64_t bit = uint64_t{1} << (segment % 64);
  KVS_CHECK_MSG((word & bit) == 0, "segment already in the set");
  word |= bit;
  ++count_;
}

void SegmentBitmap::Erase(uint64_t segment) {
  KVS_CHECK_MSG(segment < capacity_, "segment beyond the volume");
  uint64_t& word = words_[segment / 64];
  const uint64_t bit = uint64_t{1} << (segment % 64);
  KVS_CHECK_MSG((word & bit) != 0, "segment not in the set");
  word &= ~bit;
  --count_;
}

std::optional<uint64_t> SegmentBitmap::FindAbsent(uint64_t start) const {
  if (capacity_ == 0 || count_ == capacity_) {
    return std::nullopt;
  }
  if (start >= capacity_) {
    start = 0;
  }
  const size_t word_count = words_.size();
  size_t index = start / 64;
  // Bits below `start` in the first word are checked on the wrap-around.
  uint64_t free_bits = ~words_[index] & (~uint64_t{0} << (start % 64));
  for (size_t visited = 0; visited <= word_count; ++visited) {
    if (free_bits != 0) {
      const uint64_t segment =
          index * 64 + static_cast<uint64_t>(std::countr_zero(free_bits));
      if (segment < capacity_) {
        return segment;
      }
    }
    index = (index + 1) % word_count;
    free_bits = ~words_[index];
  }
  return std::nullopt;
}

void SegmentBitmap::EncodeTo(std::string* out) const {
  coding::PutVarint64(out, capacity_);
  for (uint64_t word : words_) {
    coding::PutFixed64(out, word);
  }
}

bool SegmentBitmap::DecodeFrom(std::string_view* input) {
  uint64_t capacity;
  if (!coding::GetVarint64(input, &capacity)) {
    return false;
  }
  // Not (capacity + 63) / 64: that wraps for a capacity near 2^64, leaving
  // no words for the bits the capacity claims.
  const uint64_t word_count = capacity / 64 + (capacity % 64 != 0 ? 1 : 0);
  if (word_count > input->size() / 8) {
    return false;
  }
  std::vector<uint64_t> words(word_count);
  uint64_t count = 0;
  for (auto& word : words) {
    word = coding::DecodeFixed64(input->data());
    input->remove_prefix(8);
    count += static_cast<uint64_t>(std::popcount(word));
  }
  // Bits beyond the capacity must be clear.
  if (capacity % 64 != 0 && (words.back() >> (capacity % 64)) != 0) {
    return false;
  }
  words_ = std::move(words);
  capacity_ = capacity;
  count_ = count;
  return true;
}

}  // namespace kvs::alloc
