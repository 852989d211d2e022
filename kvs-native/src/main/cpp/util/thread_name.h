// Names the calling thread (what top -H, perf and /proc/<pid>/task/*/comm
// show), so CPU time can be told apart by role: the replication benchmark
// splits server CPU by these names.
//
// Thread safety: affects the calling thread only.

#ifndef KVS_UTIL_THREAD_NAME_H_
#define KVS_UTIL_THREAD_NAME_H_

#include <sys/prctl.h>

namespace kvs {

// Thread names of the native library, by role (at most 15 characters).
inline constexpr char kThreadFabricAccept[] = "kvs-fab-accept";
inline constexpr char kThreadFabricSpin[] = "kvs-fab-spin";
inline constexpr char kThreadFabricWorker[] = "kvs-fab-worker";
inline constexpr char kThreadFabricControl[] = "kvs-fab-control";
inline constexpr char kThreadStreamLoop[] = "kvs-stream";
inline constexpr char kThreadStreamWorker[] = "kvs-stream-work";
inline constexpr char kThreadStreamControl[] = "kvs-stream-ctl";
// A shard (shard/shard.h) appends its index: kvs-shard-0, kvs-shard-1, ...
inline constexpr char kThreadShard[] = "kvs-shard-";
inline constexpr char kThreadReplication[] = "kvs-replicate";
inline constexpr char kThreadCatchUpReader[] = "kvs-catch-up";
inline constexpr char kThreadConnector[] = "kvs-connect";
inline constexpr char kThreadMaintenance[] = "kvs-maintain";
inline constexpr char kThreadCompaction[] = "kvs-compact";
inline constexpr char kThreadHoldTimer[] = "kvs-hold";

inline void SetThreadName(const char* name) {
  ::prctl(PR_SET_NAME, name, 0, 0, 0);
}

}  // namespace kvs

#endif  // KVS_UTIL_THREAD_NAME_H_
