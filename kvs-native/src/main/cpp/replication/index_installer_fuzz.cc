// libFuzzer target for the backup's end of Send-Index: a shipped index
// segment and the level descriptor that installs it, both from the network.
//
// Input: fixed16 descriptor length, the descriptor (LevelDescriptor
// encoding, primary offsets), then the bytes of primary index segment 5.
// The backup holds whole copies of the primary's large-log segments 4096 to
// 4111 (where testing/tree_entries.h puts value pointers). Anything may be
// refused; nothing may crash or leak a reserved segment, and a level that
// installs must open (its filter valid) and scan to its end. What the
// installer checks is every node and the segment's layout; how nodes link
// up is checked by readers (btree/tree_reader.h), which answer Corruption,
// never a wrong value, so a scan may end with an error but always ends.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "alloc/metadata_batch.h"
#include "btree/tree_reader.h"
#include "lsm/level.h"
#include "lsm/node_cache.h"
#include "lsm/region.h"
#include "replication/index_installer.h"
#include "testing/memory_device.h"
#include "testing/tree_entries.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/limits.h"

namespace {

using kvs::Status;
namespace replication = kvs::replication;

struct Backup {
  std::shared_ptr<kvs::testing::MemoryDevice> device;
  std::unique_ptr<kvs::alloc::Volume> volume;
  std::unique_ptr<replication::LogMirror> large;

  Backup() {
    device = kvs::testing::MemoryDevice::Create(
        64 * kvs::limits::segment_size_bytes);
    KVS_CHECK(kvs::alloc::Volume::Create(device->Open(), {}, &volume).ok());
    KVS_CHECK(replication::LogMirror::Open(volume.get(), 1,
                                           kvs::log::LogKind::kLarge, &large)
                  .ok());
    const std::string copy(kvs::limits::segment_size_bytes, 'v');
    for (uint64_t i = 0; i < 16; ++i) {
      KVS_CHECK(
          large
              ->Persist(kvs::testing::test_log_segment_first + i, i, copy, true)
              .ok());
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Backup* const backup = new Backup();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.size() < 2) return 0;
  const size_t descriptor_size = kvs::coding::DecodeFixed16(input.data());
  if (input.size() < 2 + descriptor_size) return 0;
  kvs::lsm::LevelDescriptor primary;
  const bool decoded = kvs::lsm::LevelDescriptor::Decode(
                           input.substr(2, descriptor_size), &primary)
                           .ok();
  const std::string_view segment = input.substr(2 + descriptor_size);

  std::unique_ptr<replication::IndexInstaller> installer;
  KVS_CHECK(replication::IndexInstaller::Open(backup->volume.get(), 1,
                                              {backup->large.get(), nullptr},
                                              &installer)
                .ok());
  kvs::lsm::LevelDescriptor installed;
  bool ok = installer->ReceiveSegment(0, 5, segment).ok() && decoded &&
            installer->Install(0, primary, std::nullopt, 0, &installed).ok();
  installer.reset();
  KVS_CHECK(backup->volume->stats().reserved_segments == 0);
  if (!ok || installed.empty()) return 0;

  // Installed: it reads back whole.
  kvs::lsm::NodeCache nodes(backup->volume->file(), 1 << 20);
  std::shared_ptr<kvs::lsm::Level> level;
  KVS_CHECK(
      kvs::lsm::Level::Open(backup->volume->file(), &nodes, installed, &level)
          .ok());
  kvs::btree::TreeReader::Iterator scan(&level->tree());
  for (scan.SeekToFirst(); scan.Valid(); scan.Next()) {
  }
  // Undo the install for the next input.
  kvs::alloc::MetadataBatch undo;
  for (const uint64_t used : installed.index_segments) undo.Free(used);
  undo.Delete(kvs::lsm::Region::LevelCatalogKey(1, 0));
  KVS_CHECK(backup->volume->Commit(undo).ok());
  return 0;
}
