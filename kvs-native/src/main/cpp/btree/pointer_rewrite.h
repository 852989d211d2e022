// Rewriting the device pointers of a node, as a backup does with the index
// segments it receives through Send-Index.
//
// A backup stores a primary's segments in segments of its own, so every
// pointer a shipped node holds (value-log records, children, the next leaf)
// must be translated from the primary's segment numbers to the backup's.
// All of a node's pointers sit in the pointer array at a fixed place, and
// the next-leaf pointer in the header (btree/node_format.h), so the rewrite
// touches only them and never interprets keys or entries; it then recomputes
// the checksum.
//
// Thread safety: a pure function of its arguments (the map is called from
// the calling thread only).

#ifndef KVS_BTREE_POINTER_REWRITE_H_
#define KVS_BTREE_POINTER_REWRITE_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "util/status.h"

namespace kvs::btree {

// Translates one device offset; typically keeps the offset in the segment
// and looks the segment number up in the primary-to-backup segment map. An
// error (e.g. NotFound for a segment the backup has not received) is
// returned by RewriteNodePointers as is.
using PointerMap =
    std::function<Status(uint64_t old_offset, uint64_t* new_offset)>;

// Rewrites node[0..size) in place: every pointer of the pointer array and a
// non-zero next-leaf pointer (0, "no next leaf", stays 0) go through `map`,
// in array order then the next leaf, and the checksum is recomputed.
// The node is validated first (Corruption if ValidateNode rejects it) and
// again after the rewrite (InvalidArgument if `map` produced a pointer the
// format does not allow, e.g. one that moves a node across a segment
// boundary). On any error the node is left unchanged.
Status RewriteNodePointers(char* node, size_t size, const PointerMap& map);

}  // namespace kvs::btree

#endif  // KVS_BTREE_POINTER_REWRITE_H_
