#include "alloc/metadata_batch.h"

#include "util/coding.h"

namespace kvs::alloc {
namespace {

// Counts are bounded by the input: every element takes at least one byte.
bool GetCount(std::string_view* input, uint64_t* count) {
  return coding::GetVarint64(input, count) && *count <= input->size();
}

}  // namespace

std::string MetadataBatch::Encode() const {
  std::string out;
  coding::PutVarint64List(&out, allocations_);
  coding::PutVarint64List(&out, frees_);
  coding::PutVarint64(&out, puts_.size());
  for (const auto& [key, value] : puts_) {
    coding::PutLengthPrefixed(&out, key);
    coding::PutLengthPrefixed(&out, value);
  }
  coding::PutVarint64(&out, deletes_.size());
  for (const auto& key : deletes_) {
    coding::PutLengthPrefixed(&out, key);
  }
  coding::PutVarint64List(&out, shares_);
  return out;
}

Status MetadataBatch::Decode(std::string_view payload, MetadataBatch* batch) {
  MetadataBatch result;
  std::string_view input = payload;
  uint64_t count;
  bool ok = coding::GetVarint64List(&input, &result.allocations_) &&
            coding::GetVarint64List(&input, &result.frees_) &&
            GetCount(&input, &count);
  for (uint64_t i = 0; ok && i < count; ++i) {
    std::string_view key, value;
    ok = coding::GetLengthPrefixed(&input, &key) &&
         coding::GetLengthPrefixed(&input, &value);
    if (ok) {
      result.Put(key, value);
    }
  }
  ok = ok && GetCount(&input, &count);
  for (uint64_t i = 0; ok && i < count; ++i) {
    std::string_view key;
    ok = coding::GetLengthPrefixed(&input, &key);
    if (ok) {
      result.Delete(key);
    }
  }
  // Records of volume format 1 end here; format 2 adds the shares.
  if (ok && !input.empty()) {
    ok = coding::GetVarint64List(&input, &result.shares_);
  }
  if (!ok || !input.empty()) {
    return Status::Corruption("malformed metadata batch");
  }
  *batch = std::move(result);
  return Status::Ok();
}

}  // namespace kvs::alloc
