// Batched reads through io_uring: one ring per thread, created on first use,
// so any thread (an engine thread or a JVM thread calling in) can keep a
// batch of reads in flight with one system call and no locks.
//
// Thread safety: each thread uses its own ring.

#ifndef KVS_IO_URING_READS_H_
#define KVS_IO_URING_READS_H_

#include <cstddef>
#include <span>
#include <vector>

#include "io/file.h"

namespace kvs::io {

// Reads every op of `ops` from `fd`. Returns false, touching nothing, when
// io_uring is unavailable on this thread (an old kernel, a seccomp filter,
// io_uring_disabled); the caller then reads with pread. Otherwise sets the
// status of each op that failed and appends to `retry` the index of each op
// the ring did not read completely (a short read), which the caller
// finishes with pread so that a read past the end gets its usual error.
bool UringReadMany(int fd, std::span<ReadOp> ops, std::vector<size_t>* retry);

}  // namespace kvs::io

#endif  // KVS_IO_URING_READS_H_
