#include "io/uring_reads.h"

#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace kvs::io {
namespace {

// Batches larger than the ring go in several rounds.
constexpr unsigned kRingEntries = 64;

class ThreadRing {
 public:
  ~ThreadRing() { Shutdown(); }

  // The ring, set up on first use; nullptr if io_uring cannot be used here.
  io_uring* Get() {
    if (state_ == State::kUnset) {
      state_ = io_uring_queue_init(kRingEntries, &ring_, 0) == 0
                   ? State::kReady
                   : State::kUnavailable;
    }
    return state_ == State::kReady ? &ring_ : nullptr;
  }

  // After an unexpected ring error: never use io_uring on this thread again.
  void Shutdown() {
    if (state_ == State::kReady) {
      io_uring_queue_exit(&ring_);
    }
    state_ = State::kUnavailable;
  }

 private:
  enum class State { kUnset, kReady, kUnavailable };
  State state_ = State::kUnset;
  io_uring ring_{};
};

thread_local ThreadRing t_ring;

// Waits for the next completion; 0 or the negative error.
int WaitCompletion(io_uring* ring, io_uring_cqe** cqe) {
  int result;
  do {
    result = io_uring_wait_cqe(ring, cqe);
  } while (result == -EINTR);
  return result;
}

Status ReadError(const ReadOp& op, int error) {
  return Status::FromErrno("read at " + std::to_string(op.offset) + " (" +
                               std::to_string(op.size) + " bytes)",
                           error);
}

}  // namespace

bool UringReadMany(int fd, std::span<ReadOp> ops, std::vector<size_t>* retry) {
  io_uring* ring = t_ring.Get();
  if (ring == nullptr) {
    return false;
  }
  size_t start = 0;
  while (start < ops.size()) {
    const size_t count =
        std::min<size_t>(ops.size() - start, static_cast<size_t>(kRingEntries));
    for (size_t i = start; i < start + count; ++i) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      io_uring_prep_read(sqe, fd, ops[i].out,
                         static_cast<unsigned>(ops[i].size), ops[i].offset);
      io_uring_sqe_set_data64(sqe, i);
    }
    int submitted;
    do {
      submitted = io_uring_submit_and_wait(ring, static_cast<unsigned>(count));
    } while (submitted == -EINTR);
    if (submitted < 0 || static_cast<size_t>(submitted) != count) {
      // The ring is in an unknown state; reap what went in, read the rest
      // with pread and stop using io_uring on this thread.
      const size_t in_flight =
          submitted < 0 ? 0 : static_cast<size_t>(submitted);
      for (size_t reaped = 0; reaped < in_flight; ++reaped) {
        io_uring_cqe* cqe = nullptr;
        if (WaitCompletion(ring, &cqe) != 0) {
          break;
        }
        io_uring_cqe_seen(ring, cqe);
      }
      t_ring.Shutdown();
      for (size_t i = start; i < ops.size(); ++i) {
        retry->push_back(i);
      }
      return true;
    }
    for (size_t reaped = 0; reaped < count; ++reaped) {
      io_uring_cqe* cqe = nullptr;
      if (WaitCompletion(ring, &cqe) != 0) {
        t_ring.Shutdown();
        for (size_t i = start; i < ops.size(); ++i) {
          retry->push_back(i);
        }
        return true;
      }
      const size_t index = static_cast<size_t>(io_uring_cqe_get_data64(cqe));
      const int res = cqe->res;
      io_uring_cqe_seen(ring, cqe);
      ReadOp& op = ops[index];
      // EINVAL: a file system that refuses reads at the device's block size;
      // File::Read retries them a page at a time.
      if (res == -EAGAIN || res == -EINTR || res == -EINVAL ||
          (res >= 0 && static_cast<size_t>(res) != op.size)) {
        retry->push_back(index);
      } else if (res < 0) {
        op.status = ReadError(op, -res);
      } else {
        op.status = Status::Ok();
      }
    }
    start += count;
  }
  return true;
}

}  // namespace kvs::io
