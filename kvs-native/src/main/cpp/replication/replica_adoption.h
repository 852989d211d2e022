// Replica adoption: a Send-Index backup's copies become its region's own
// logs (promotion, Tebis §3.5; docs/ARCHITECTURE.md "Failure recovery").
//
// A backup holds, for the region it backs up: the levels the IndexInstaller
// committed under the region's own catalog keys (`r/<id>/level/NN`, and the
// compacted LSN as `r/<id>/state`), copies of the primary's small, large and
// medium log segments (LogMirror, `r/<id>/logmap/...`), and whatever landed
// in its replica buffers since their last FLUSH-TAIL. Adoption, with the
// region closed, makes the region own all of it:
//
// 1. For the small and large logs, the best bytes of each chain position
//    (a landed buffer supersedes the persisted copy where it holds more
//    records that check out) are walked record by record. The chain is
//    kept up to the first position that does not end with an end record:
//    that one is the log's tail, and later positions are freed (no write in
//    them was acknowledged: a write is acknowledged only with every log byte
//    before it, end records included). replica_chain.h decides this, for
//    the replica digest as well.
// 2. Every kept copy's header block is rewritten with the region's own id
//    (records are checked against the segment's nonce, which stays); a tail
//    or a position that came from a buffer is written whole, its bytes past
//    the last record zeroed, so nothing of an earlier use of the segment
//    can be read as part of the log. All synced.
// 3. One metadata batch: the copies become `r/<id>/log/<kind>/<chain>`
//    entries (sealed large segments but the last get their `sealed/`
//    totals, so GC can free them; the last is the log's current segment,
//    sealed when the log rolls), the log map entries go (medium copies stay
//    allocated: the levels name them), the region's own earlier log segments
//    and GC state are freed, and the replica marker is deleted.
//
// Opening the region afterwards replays both logs past the compacted LSN to
// the first LSN missing from both (point-in-time recovery, lsm/region.h).
// A crash before the batch leaves the replica as it was (adoption runs
// again); after it, the region is the owner.

#ifndef KVS_REPLICATION_REPLICA_ADOPTION_H_
#define KVS_REPLICATION_REPLICA_ADOPTION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/volume.h"
#include "log/log_format.h"
#include "lsm/key_bounds.h"
#include "replication/replica_chain.h"
#include "util/status.h"

namespace kvs::replication {

// The catalog key marking engine region `region_id` as a Send-Index
// backup's replica (its levels and copies are a primary's, not its own).
std::string ReplicaMarkerKey(uint64_t region_id);
bool HoldsReplica(const alloc::Volume& volume, uint64_t region_id);
// Whether the replica of `region_id` mirrors lineage `incarnation` (of the
// primary's region, lsm::Region::incarnation; 0 matches nothing).
bool HoldsReplicaOf(const alloc::Volume& volume, uint64_t region_id,
                    uint64_t incarnation);

struct AdoptionReport {
  uint64_t segments = 0;          // copies that became log segments
  uint64_t dropped_segments = 0;  // copies past a log's tail, freed
  uint64_t landed_segments = 0;   // positions taken from landed buffers
};

// Makes engine region `region_id` (closed) the owner of its replica on
// `volume`, as above. `landed`: the stream's log buffers, if it is live.
// `bounds`: the keys the region serves; unless every key, they become the
// region's (its origin entry, lsm/key_bounds.h), since the levels of a
// region split from another, shipped as they are, hold its sibling's keys.
Status AdoptReplica(alloc::Volume* volume, uint64_t region_id,
                    const std::vector<LandedLog>& landed,
                    const lsm::KeyBounds& bounds, AdoptionReport* report);

}  // namespace kvs::replication

#endif  // KVS_REPLICATION_REPLICA_ADOPTION_H_
