// ReplicationTap: where a region's replication events go -- the bytes its
// logs append (value-log replication), the index segments its compactions
// finish and the levels they install (Send-Index). The engine forwards its
// regions' RegionContext hooks to the tap set on it (Engine::
// SetReplicationTap), so a replication service can attach after the
// regions are open.
//
// Thread safety: called from writer and compaction threads concurrently;
// an implementation must not call back into the region.

#ifndef KVS_LSM_REPLICATION_TAP_H_
#define KVS_LSM_REPLICATION_TAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "log/log_writer.h"
#include "lsm/level.h"

namespace kvs::lsm {

class ReplicationTap {
 public:
  virtual ~ReplicationTap() = default;
  // `region_id` is the engine's id of the region (Region::id()).
  virtual void OnLogAppend(uint64_t region_id, log::LogKind kind,
                           const log::AppendedBytes& appended) = 0;
  // See RegionContext::on_index_segment.
  virtual void OnIndexSegment(uint64_t region_id, size_t level,
                              uint64_t segment, std::string_view bytes) = 0;
  // See RegionContext::on_level_installed.
  virtual void OnLevelInstalled(uint64_t region_id, size_t level,
                                const LevelDescriptor& descriptor,
                                std::optional<size_t> emptied,
                                uint64_t compacted_lsn) = 0;
  // See RegionContext::on_log_released.
  virtual void OnLogReleased(
      uint64_t region_id, log::LogKind kind,
      const std::vector<log::ReleasedSegment>& released) = 0;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_REPLICATION_TAP_H_
