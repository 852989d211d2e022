// Replay of a log after a restart: reads its segments in chain order and
// hands every put and delete record to a visitor, then says where the log
// ends so a LogWriter can continue it.
//
// What counts as the end: the first record of the last segment that fails
// its checks, unless a later intact sync mark in that segment says the
// damaged bytes had been made durable -- then, as for any damage in an
// earlier segment, replay fails with Corruption naming the region, log,
// segment and offset.

#ifndef KVS_LOG_LOG_READER_H_
#define KVS_LOG_LOG_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

#include "io/file.h"
#include "log/log_format.h"
#include "log/log_writer.h"
#include "util/status.h"

namespace kvs::log {

// Called for every put and delete, in log order. `device_offset` and `size`
// locate the record (what an index stores to point at it).
using RecordVisitor = std::function<Status(
    const Record& record, uint64_t device_offset, uint32_t size)>;

// `segments` maps chain index to segment number (from the catalog); gaps
// are allowed (segments released or skipped). An empty map is an empty log.
// `end_in_last`, if set, is where the caller has decided the log ends, at a
// record boundary of the last segment (point-in-time recovery): replay
// stops there and reports the tail there; Corruption if no record starts
// at that offset.
Status ReplayLog(io::File* file, const LogIdentity& identity,
                 const std::map<uint64_t, uint64_t>& segments,
                 const RecordVisitor& visit, LogTail* tail,
                 std::optional<uint64_t> end_in_last = std::nullopt);

}  // namespace kvs::log

#endif  // KVS_LOG_LOG_READER_H_
