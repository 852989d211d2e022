// A device level L1..Ln of a region: a B+-tree in segments, its Bloom
// filter, and the medium-log segments whose records its leaves point to.
//
// The descriptor is the catalog value of "r/<region>/level/<n>" (n = 1..),
// replaced atomically (with the segments it allocates and frees) by the
// metadata batch that installs a compaction's output:
//
// | field            | encoding                                         |
// |------------------|--------------------------------------------------|
// | version          | varint, 1                                        |
// | root             | varint device offset of the root node (0: empty) |
// | entries          | varint                                           |
// | kv_bytes         | varint: key + value bytes the level stands for   |
// | index_segments   | varint count, varint segment numbers             |
// | bloom_bytes      | varint                                           |
// | bloom_chunks     | varint count, varint device offsets: the filter, |
// |                  | in pieces of up to 2 MiB in the index segments   |
// | medium_segments  | varint count, varint segment numbers             |

#ifndef KVS_LSM_LEVEL_H_
#define KVS_LSM_LEVEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "btree/bloom_filter.h"
#include "btree/tree_reader.h"
#include "io/file.h"
#include "util/status.h"

namespace kvs::lsm {

struct LevelDescriptor {
  uint64_t root = 0;
  uint64_t entries = 0;
  uint64_t kv_bytes = 0;
  std::vector<uint64_t> index_segments;
  uint64_t bloom_bytes = 0;
  std::vector<uint64_t> bloom_chunks;  // device offsets
  std::vector<uint64_t> medium_segments;

  bool empty() const { return root == 0; }
  std::string Encode() const;
  static Status Decode(std::string_view encoded, LevelDescriptor* descriptor);
  // Every segment the level owns.
  std::vector<uint64_t> AllSegments() const;
};

// An installed level: immutable; replaced as a whole by compaction. Shared
// by readers through shared_ptr, so a level being replaced stays readable
// until its last reader lets go.
class Level {
 public:
  // Loads the Bloom filter (from `bloom_chunks`) through `file`.
  static Status Open(io::File* file, btree::NodeSource* nodes,
                     LevelDescriptor descriptor, std::shared_ptr<Level>* level);

  const LevelDescriptor& descriptor() const { return descriptor_; }
  const btree::TreeReader& tree() const { return tree_; }
  bool MayContain(std::string_view key) const { return bloom_.MayContain(key); }
  bool IsMediumSegment(uint64_t segment) const;
  size_t MemoryBytes() const { return bloom_bytes_.size(); }

 private:
  Level(btree::NodeSource* nodes, LevelDescriptor descriptor);

  const LevelDescriptor descriptor_;
  btree::TreeReader tree_;
  std::string bloom_bytes_;  // owned; bloom_ refers into it
  btree::BloomFilterReader bloom_;
};

}  // namespace kvs::lsm

#endif  // KVS_LSM_LEVEL_H_
