// ZeroPages: a zeroed buffer whose memory is resident only where it was
// written, and which gives pages back to the kernel when zeroed again.
//
// A backup holds one 2 MiB buffer per log and chain parity of every region it
// backs up (replication::SendIndexSink), most of them idle at any moment; as
// heap memory zeroed with memset each would cost its full size from the
// start (measured: 5.4 GB per server for 1,024 regions at RF 2). Here the
// buffer is a private anonymous mapping (huge pages off, so that one touched
// byte costs a page, not 2 MiB): untouched pages read as zeros and take no
// memory, and Zero() returns whole pages with MADV_DONTNEED, after which they
// read as zeros again.
//
// `reclaim` false keeps the pages (Zero() writes zeros instead): memory a
// device has pinned (an RDMA NIC's registration) must keep its pages, since
// the device goes on writing into the ones it pinned.
//
// Not thread-safe; as with memset, Zero() must not race a write into the
// same range.

#ifndef KVS_IO_ZERO_PAGES_H_
#define KVS_IO_ZERO_PAGES_H_

#include <cstddef>
#include <utility>

#include "util/status.h"

namespace kvs::io {

class ZeroPages {
 public:
  ZeroPages() = default;
  ~ZeroPages();
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;
  ZeroPages(ZeroPages&& other) noexcept { *this = std::move(other); }
  ZeroPages& operator=(ZeroPages&& other) noexcept;

  // A mapping of `bytes` that reclaims its pages, or a failed check when the
  // kernel refuses it (as the heap's allocations are checked).
  static ZeroPages OrDie(size_t bytes);

  // Maps `bytes` (rounded up to pages) of zeros; the kernel's error when it
  // refuses the mapping.
  Status Map(size_t bytes, bool reclaim);

  char* data() const { return data_; }
  size_t size() const { return size_; }
  // Sets bytes [offset, offset + length) to zero.
  void Zero(size_t offset, size_t length);

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;
  bool reclaim_ = true;
};

}  // namespace kvs::io

#endif  // KVS_IO_ZERO_PAGES_H_
