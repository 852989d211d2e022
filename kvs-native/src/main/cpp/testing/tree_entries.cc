#include "testing/tree_entries.h"

#include <utility>

#include "alloc/device_offset.h"
#include "testing/random_keys.h"
#include "util/limits.h"

namespace kvs::testing {

TreeValue TreeValue::From(const btree::LeafValue& value) {
  return {value.kind, std::string(value.inline_bytes), value.log_offset,
          value.log_record_size_bytes};
}

btree::LeafValue TreeValue::view() const {
  switch (kind) {
    case btree::EntryKind::kPutInline:
      return btree::LeafValue::Inline(inline_bytes);
    case btree::EntryKind::kPutInLog:
      return btree::LeafValue::InLog(log_offset, log_record_size_bytes);
    case btree::EntryKind::kDelete:
      break;
  }
  return btree::LeafValue::Tombstone();
}

TreeEntries RandomTreeEntries(uint64_t seed,
                              const TreeEntriesOptions& options) {
  RandomBytes random(seed);
  TreeEntries entries;
  for (size_t i = 0; i < options.count; ++i) {
    std::string key = random.Key(options.key_size_min, options.key_size_max);
    TreeValue value;
    const uint64_t draw = random.Uniform(4);
    if (draw <= 1) {
      value.kind = btree::EntryKind::kPutInline;
      value.inline_bytes =
          random.Bytes(random.Uniform(options.inline_value_size_max + 1));
    } else if (draw == 2) {
      value.kind = btree::EntryKind::kPutInLog;
      value.log_record_size_bytes = static_cast<uint32_t>(
          1 + random.Uniform(limits::value_size_bytes_max));
      const uint64_t offset_in_segment = random.Uniform(
          limits::segment_size_bytes - value.log_record_size_bytes + 1);
      value.log_offset = alloc::DeviceOffset(
          test_log_segment_first + random.Uniform(16), offset_in_segment);
    }
    entries[std::move(key)] = std::move(value);
  }
  return entries;
}

Status BuildTree(const TreeEntries& entries, MemoryNodeStore* store,
                 uint64_t* root_offset, btree::BuildStats* stats) {
  btree::TreeBuilder builder(store);
  for (const auto& [key, value] : entries) {
    KVS_RETURN_IF_ERROR(builder.Add(key, value.view()));
  }
  KVS_RETURN_IF_ERROR(builder.Finish(root_offset));
  if (stats != nullptr) {
    *stats = builder.stats();
  }
  return Status::Ok();
}

}  // namespace kvs::testing
