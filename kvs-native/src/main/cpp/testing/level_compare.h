// Test helper: whether a backup's copy of a level (Send-Index) reads as the
// primary's -- same keys and kinds, same inline values, value records at
// the backup's (translated) offsets holding the primary's bytes, a Bloom
// filter that knows every key. (No gtest here: fuzz targets link the
// testing helpers too.)

#ifndef KVS_TESTING_LEVEL_COMPARE_H_
#define KVS_TESTING_LEVEL_COMPARE_H_

#include <cstdint>

#include "io/file.h"
#include "lsm/level.h"
#include "lsm/node_cache.h"
#include "util/status.h"

namespace kvs::testing {

struct LevelComparison {
  uint64_t entries = 0;
  uint64_t in_log = 0;          // values behind log pointers
  uint64_t medium_values = 0;   // of which in the primary's medium segments
  uint64_t moved_pointers = 0;  // pointers the backup translated
};

// Compares `primary` (read through `primary_nodes`) with `backup` (read
// through a fresh cache: a backup reuses the segments of replaced levels);
// Corruption naming the first difference.
Status CompareLevels(io::File* primary_file, lsm::NodeCache* primary_nodes,
                     const lsm::LevelDescriptor& primary, io::File* backup_file,
                     const lsm::LevelDescriptor& backup,
                     LevelComparison* counts);

}  // namespace kvs::testing

#endif  // KVS_TESTING_LEVEL_COMPARE_H_
