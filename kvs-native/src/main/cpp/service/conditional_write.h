// A compare-and-set's or an increment's decision (wire opcodes
// COMPARE_AND_SET and INCREMENT): what the key holds decides what is
// written. The caller runs it where nothing else writes the region between
// its read and its write -- the region service in its replication group's
// write order (Replicator::WriteDecided) or under a key stripe's lock, the
// C ABI under its own (kvs_compare_and_set).
//
// Thread safety: a free function; the caller serialises the key's writes.

#ifndef KVS_SERVICE_CONDITIONAL_WRITE_H_
#define KVS_SERVICE_CONDITIONAL_WRITE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "lsm/region.h"
#include "replication/replication_format.h"
#include "util/status.h"
#include "wire/messages.h"

namespace kvs::service {

// What a conditional write decided: applied, or not and the key's value
// then (`current`, none: no value); an increment's sum. `written` holds
// the bytes an increment wrote (a record's view points into it).
struct ConditionalOutcome {
  bool applied = false;
  std::optional<std::string> current;
  int64_t counter = 0;
  std::string written;
  // A retry whose first attempt the region applied (its write id found):
  // answered as that attempt was, writing nothing.
  bool repeated = false;
  uint64_t lsn = 0;  // the region's last LSN once decided (Reply::lsn)
};

// Decides `request` (a COMPARE_AND_SET or an INCREMENT) on what `region`
// holds and writes what it decided, filling `outcome` and, if it wrote,
// `record` (what a replication group ships; its views valid while
// `request` and `outcome` are). With `refuse_device` its read runs with
// device reads refused: one refused sets *needs_device and writes nothing.
// INVALID_ARGUMENT, writing nothing, for an increment of a value that is
// not 8 bytes or past 64 bits.
//
// A request with a write id (wire::Request::client_id, sequence) writes it
// with its record; one whose id the region holds (lsm::WriteIds) is a retry
// of a write it applied, answered as that was (`repeated`), writing nothing;
// a retry whose id it does not hold but whose first attempt it may have
// forgotten (its floor below the table's horizon) fails with IO_ERROR, its
// outcome unknown, writing nothing.
Status DecideConditional(const wire::Request& request, lsm::Region* region,
                         bool refuse_device, ConditionalOutcome* outcome,
                         replication::Record* record, bool* wrote,
                         bool* needs_device);

}  // namespace kvs::service

#endif  // KVS_SERVICE_CONDITIONAL_WRITE_H_
