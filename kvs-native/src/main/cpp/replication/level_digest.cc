#include "replication/level_digest.h"

#include <memory>
#include <string>

#include "btree/tree_reader.h"
#include "lsm/node_cache.h"
#include "lsm/record_reader.h"
#include "util/coding.h"
#include "util/hash.h"

namespace kvs::replication {
namespace {

// Order-dependent: a * digest + h over the entries, in order.
constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ull;

}  // namespace

Status DigestLevels(io::File* file,
                    const std::map<size_t, lsm::LevelDescriptor>& levels,
                    LevelsDigest* digest) {
  *digest = {};
  // A cache of its own: a backup reuses the segments of replaced levels.
  lsm::NodeCache nodes(file, 8 << 20);
  lsm::RecordReader records(file);
  std::string bytes, read;
  for (const auto& [number, descriptor] : levels) {
    if (descriptor.empty()) continue;
    std::shared_ptr<lsm::Level> level;
    KVS_RETURN_IF_ERROR(lsm::Level::Open(file, &nodes, descriptor, &level));
    ++digest->levels;
    btree::TreeReader::Iterator it(&level->tree());
    for (it.SeekToFirst(); it.Valid(); it.Next()) {
      const btree::LeafValue value = it.value();
      bytes.clear();
      coding::PutFixed32(&bytes, static_cast<uint32_t>(number));
      coding::PutFixed32(&bytes, static_cast<uint32_t>(it.key().size()));
      bytes.append(it.key());
      bytes.push_back(static_cast<char>(value.kind));
      if (value.kind == btree::EntryKind::kPutInline) {
        bytes.append(value.inline_bytes);
      } else if (value.kind == btree::EntryKind::kPutInLog) {
        KVS_RETURN_IF_ERROR(records.ReadValue(
            value.log_offset, value.log_record_size_bytes, it.key(), &read));
        bytes.append(read);
      }
      digest->digest =
          digest->digest * kMultiplier + Hash64(bytes.data(), bytes.size());
      ++digest->entries;
    }
    KVS_RETURN_IF_ERROR(it.status());
  }
  return Status::Ok();
}

}  // namespace kvs::replication
