// Fuzzes the replication decoders a backup (records in its buffers, control
// messages) and a primary (control replies) apply to bytes from a peer: any
// input is decoded without reading outside it; what decodes as records
// re-encodes to the same bytes, and ValidPrefix agrees with DecodeRecords.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "replication/replication_format.h"
#include "replication/send_index_format.h"
#include "util/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace replication = kvs::replication;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<replication::Record> records;
  if (replication::DecodeRecords(bytes, &records).ok()) {
    std::string encoded;
    for (const auto& record : records) {
      replication::EncodeRecord(record, &encoded);
    }
    KVS_CHECK(encoded == bytes);
    KVS_CHECK(replication::ValidPrefix(bytes) == bytes.size());
  } else {
    KVS_CHECK(replication::ValidPrefix(bytes) < bytes.size());
  }
  replication::Control control;
  if (replication::DecodeControl(bytes, &control).ok()) {
    std::string encoded;
    replication::EncodeControl(control, &encoded);
    KVS_CHECK(encoded == bytes);
  }
  replication::ControlReply reply;
  (void)replication::DecodeControlReply(bytes, &reply);
  // Send-Index messages: what decodes re-encodes to a message that decodes
  // to the same (a descriptor's varints may have had longer forms).
  replication::IndexControl index;
  if (replication::DecodeIndexControl(bytes, &index).ok()) {
    KVS_CHECK(replication::IsIndexControl(bytes));
    std::string encoded;
    replication::EncodeIndexControl(index, &encoded);
    KVS_CHECK(encoded.size() <= bytes.size());
    replication::IndexControl again;
    KVS_CHECK(replication::DecodeIndexControl(encoded, &again).ok());
    std::string reencoded;
    replication::EncodeIndexControl(again, &reencoded);
    KVS_CHECK(reencoded == encoded);
  }
  return 0;
}
