// The on-device format of B+-tree nodes, shared by leaves and index nodes.
//
// Every device level (L1..Ln) of a region's LSM tree is a B+-tree built
// bottom-up by compaction (btree/tree_builder.h). Its nodes are fixed-size
// blocks packed into 2 MiB segments; a node never spans two segments.
//
// Every device pointer a node holds is a full 64-bit device offset (segment
// << 21 | offset in segment, alloc/device_offset.h), and all of them sit in
// ONE array at a fixed place right after the header (plus the next-leaf
// pointer in the header). This is what lets a backup rewrite the segment part
// of every pointer it receives through Send-Index without parsing keys or
// entries (btree/pointer_rewrite.h), and then recompute the checksum.
//
// Common layout (all integers little-endian, util/coding.h):
//
//   offset      field          size   meaning
//   ----------  -------------  -----  --------------------------------------
//            0  checksum       4      crc32c::Mask(CRC32C of bytes
//                                     [4, node size)): covers everything else
//            4  magic          4      0x4e42564b: the bytes "KVBN" (KVS
//                                     B+-tree Node)
//            8  node type      1      1 = leaf, 2 = index node
//            9  version        1      format version, 1
//           10  level          1      height above the leaves: 0 for a leaf,
//                                     1 + the children's level for an index
//                                     node (readers check it on the way down,
//                                     so a descent always ends)
//           11  reserved       1      zero
//           12  entry count    2      leaf: entries (>= 1); index: pivots
//           14  pointer count  2      leaf: put-in-log entries; index:
//                                     children, always pivots + 1
//           16  used size      2      bytes in use from the node's start;
//                                     every byte after them is zero
//           18  reserved       6      zero
//           24  next leaf      8      leaf: device offset of the next leaf
//                                     in key order, 0 for the last leaf;
//                                     index node: 0
//           32  pointer array  8 * P  P = pointer count device offsets;
//                                     leaf: value-log records; index:
//                                     children (child i at index i)
//      32 + 8P  slot array     2 * E  E = entry count offsets, from the
//                                     node's start, of the entries
//   32+8P+2E    entries        ...    packed back to back in slot order
//                                     (slot 0 points right after the slot
//                                     array) up to `used size`; leaf entries
//                                     in btree/leaf_node.h, pivots in
//                                     btree/index_node.h
//   used size   padding        ...    zero up to the node size
//
// Keys compare bytewise as unsigned bytes; the entries of a node are in
// strictly increasing key order. A value-log pointer must be non-zero and its
// record must lie inside one segment (so rewriting the segment part moves the
// whole record); a node pointer must be non-zero, aligned for direct I/O and
// its node must lie inside one segment.
//
// Thread safety: everything here is a pure function of its arguments.

#ifndef KVS_BTREE_NODE_FORMAT_H_
#define KVS_BTREE_NODE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "util/limits.h"
#include "util/status.h"

namespace kvs::btree {

enum class NodeType : uint8_t { kLeaf = 1, kIndex = 2 };

namespace node_format {

inline constexpr uint32_t magic = 0x4e42564bu;  // "KVBN" in little-endian
inline constexpr uint8_t version = 1;

// A leaf holds one maximum-size key with its largest inline value, and many
// small entries: 8 KiB is two direct-I/O blocks, small enough that a point
// lookup reads little.
inline constexpr size_t leaf_node_size_bytes = 8192;
// Index nodes are twice as large so that at least three maximum-size (4 KiB)
// pivots always fit (fan-out >= 4 whatever the keys), which bounds the height.
inline constexpr size_t index_node_size_bytes = 16384;

inline constexpr size_t header_size_bytes = 32;
inline constexpr size_t pointer_size_bytes = 8;
inline constexpr size_t slot_size_bytes = 2;

// Field offsets within the header.
inline constexpr size_t checksum_offset = 0;
inline constexpr size_t magic_offset = 4;
inline constexpr size_t node_type_offset = 8;
inline constexpr size_t version_offset = 9;
inline constexpr size_t level_offset = 10;
inline constexpr size_t reserved_byte_offset = 11;
inline constexpr size_t entry_count_offset = 12;
inline constexpr size_t pointer_count_offset = 14;
inline constexpr size_t used_size_offset = 16;
inline constexpr size_t reserved_offset = 18;
inline constexpr size_t reserved_size_bytes = 6;
inline constexpr size_t next_leaf_offset = 24;
inline constexpr size_t pointer_array_offset = header_size_bytes;
// The checksum covers every byte after itself.
inline constexpr size_t checksummed_offset = 4;

// With fan-out >= 4, 32 levels would index 4^31 leaves (16 EiB): more than
// any volume, so a larger level can only be corruption.
inline constexpr unsigned tree_height_max = 32;

static_assert(limits::segment_size_bytes % leaf_node_size_bytes == 0);
static_assert(limits::segment_size_bytes % index_node_size_bytes == 0);
static_assert(leaf_node_size_bytes % limits::io_alignment_bytes == 0);
static_assert(index_node_size_bytes % limits::io_alignment_bytes == 0);
// `used size` and slots are 16-bit.
static_assert(index_node_size_bytes <= UINT16_MAX);
static_assert(pointer_array_offset % pointer_size_bytes == 0);

}  // namespace node_format

// The size of a node of `type`.
constexpr size_t NodeSizeBytes(NodeType type) {
  return type == NodeType::kLeaf ? node_format::leaf_node_size_bytes
                                 : node_format::index_node_size_bytes;
}

// The header fields that vary between nodes (magic, version and reserved
// bytes are implied).
struct NodeHeader {
  NodeType type = NodeType::kLeaf;
  uint8_t level = 0;
  uint16_t entry_count = 0;
  uint16_t pointer_count = 0;
  uint16_t used_size_bytes = 0;
  uint64_t next_leaf_offset = 0;

  // Where the slot array and the entries begin.
  size_t SlotArrayOffset() const {
    return node_format::pointer_array_offset +
           size_t{pointer_count} * node_format::pointer_size_bytes;
  }
  size_t EntriesOffset() const {
    return SlotArrayOffset() +
           size_t{entry_count} * node_format::slot_size_bytes;
  }
};

// Reads the header of `node`, which must have at least header_size_bytes,
// without checking anything (the type byte is copied as is).
NodeHeader DecodeNodeHeader(const char* node);

// Writes the whole header (magic, version and zero reserved bytes included)
// except the checksum.
void EncodeNodeHeader(const NodeHeader& header, char* node);

// The checksum field's value for node[0..size): crc32c::Mask of the CRC32C
// of bytes [4, size). `size` must be at least header_size_bytes.
uint32_t ComputeNodeChecksum(const char* node, size_t size);

// Stores ComputeNodeChecksum in the node's checksum field.
void SealNode(char* node, size_t size);

// Writes a whole node into `node` (`size` bytes, zeroed): the header, the
// pointer array, the slot array pointing at `entry_offsets` (relative to
// the start of `entries`), the entries, and the checksum. Shared by the leaf
// and index node builders.
void AssembleNode(const NodeHeader& header,
                  const std::vector<uint64_t>& pointers,
                  const std::vector<uint16_t>& entry_offsets,
                  std::string_view entries, char* node, size_t size);

// Whether `offset` may point at a node of `node_size_bytes`: non-zero,
// aligned for direct I/O, and the node fits in its segment.
bool IsValidNodePointer(uint64_t offset, size_t node_size_bytes);

// Whether `offset` may point at a value-log record of `record_size_bytes`:
// non-zero, a non-empty record, and the record fits in its segment.
bool IsValidLogPointer(uint64_t offset, uint64_t record_size_bytes);

// Checks everything about `node` a reader relies on: its size is a node
// size, type, magic, version and checksum match, reserved bytes and padding
// are zero, counts, slots, entries and pointer indexes lie inside the node,
// entries are back to back in strictly increasing key order, and pointers
// obey the rules above. Returns Corruption naming the first problem found.
// Never reads outside `node`, whatever its bytes.
Status ValidateNode(std::string_view node);

}  // namespace kvs::btree

#endif  // KVS_BTREE_NODE_FORMAT_H_
