// libFuzzer target for MetadataBatch::Decode, the parser of redo record
// payloads (one metadata batch each).
//
// Checked: no crash or sanitizer report on any input, and no allocation
// beyond what the input can describe (libFuzzer's -rss_limit_mb and
// -malloc_limit_mb catch that); a decoded batch re-encodes into bytes that
// decode to the same batch, no longer than the input (the encoder writes
// minimal varints, the input may not) and identical to the input when the
// input was itself an encoder's output.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "alloc/metadata_batch.h"
#include "util/check.h"

namespace {

using kvs::alloc::MetadataBatch;

bool SameBatch(const MetadataBatch& a, const MetadataBatch& b) {
  return a.allocations() == b.allocations() && a.shares() == b.shares() &&
         a.frees() == b.frees() && a.puts() == b.puts() &&
         a.deletes() == b.deletes();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  MetadataBatch batch;
  if (!MetadataBatch::Decode(payload, &batch).ok()) {
    return 0;
  }
  // Decode records frees as plain frees: nothing deferred survives a restart.
  KVS_CHECK(batch.deferred_frees().empty());
  const std::string encoded = batch.Encode();
  // A format-1 record gains the (empty) shares list: one byte.
  KVS_CHECK_MSG(encoded.size() <= payload.size() + 1,
                "re-encoding grew the batch");
  MetadataBatch again;
  KVS_CHECK_MSG(MetadataBatch::Decode(encoded, &again).ok(),
                "an encoded batch does not decode");
  KVS_CHECK_MSG(SameBatch(batch, again), "round trip changed the batch");
  KVS_CHECK_MSG(again.Encode() == encoded, "encoding is not canonical");
  return 0;
}
