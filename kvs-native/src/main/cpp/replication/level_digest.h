// DigestLevels: one number for what a region's device levels hold -- every
// entry's level, key, kind and value (read and checked through the log
// pointer, for values behind one) in order -- so a Send-Index backup's
// installed levels can be compared with its primary's without shipping them
// (`./kvs local verify`). Equal digests mean the levels read the same;
// pointers may differ (they are translated), the bytes behind them may not.
//
// Thread safety: a pure function of the levels and the device.

#ifndef KVS_REPLICATION_LEVEL_DIGEST_H_
#define KVS_REPLICATION_LEVEL_DIGEST_H_

#include <cstdint>
#include <map>

#include "io/file.h"
#include "lsm/level.h"
#include "util/status.h"

namespace kvs::replication {

struct LevelsDigest {
  uint64_t digest = 0;
  uint64_t entries = 0;
  uint64_t levels = 0;  // non-empty levels
};

// Reads `levels` (by level index; empty descriptors are skipped) from
// `file` through a cache of its own.
Status DigestLevels(io::File* file,
                    const std::map<size_t, lsm::LevelDescriptor>& levels,
                    LevelsDigest* digest);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_LEVEL_DIGEST_H_
