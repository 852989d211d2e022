// Endpoint: one libfabric reliable-datagram endpoint (FI_EP_RDM) with its
// fabric, domain, completion queue and address vector -- the layer the
// one-sided message protocol and the replication channel are built on.
//
// What the protocol needs from a provider, and how each is handled here:
//
//   need                     shm                 tcp;ofi_rxm verbs;ofi_rxm
//   one-sided write          fi_write            fi_write (software  fi_write
//   (NIC)
//                                                RMA)
//   remote address of a      virtual address     offset into the     virtual
//   address registered buffer        (FI_MR_VIRT_ADDR)   region
//   (FI_MR_VIRT_ADDR) memory keys              provider's          provider's
//   provider's
//                            (FI_MR_PROV_KEY)
//   local descriptors        passed always (FI_MR_LOCAL is asked for, so
//   buffers
//                            a write reads from are registered too)
//   progress                 manual: the target must drive progress for writes
//                            into it to land, so the owner of an endpoint calls
//                            Progress() in its polling loop (no progress
//                            threads: measured 5-10x slower on 2 cores)
//
// verbs is selected by configuration and compiled like the others; the only
// difference the code sees is FI_MR_VIRT_ADDR, read from the provider's
// answer rather than assumed. It cannot be tested on machines without an RDMA
// NIC.
//
// Thread safety: the domain is opened FI_THREAD_SAFE, so PostWrite and
// Progress may be called from different threads; a completion callback runs
// on the thread that called Progress.
//
// Lifetime: every object (fabric, domain, queues, address vector) belongs
// to one endpoint, so closing it releases all it holds -- including the
// transmit queue entries of writes to a peer that died and will never
// drive their progress. Writes still in flight then are dropped without
// their callbacks.

#ifndef KVS_FABRIC_ENDPOINT_H_
#define KVS_FABRIC_ENDPOINT_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "fabric/libfabric.h"
#include "util/status.h"

namespace kvs::fabric {

enum class Provider {
  kShm,    // processes on one host
  kTcp,    // any network: tcp with the rxm reliable-datagram layer
  kVerbs,  // RDMA NICs: verbs with rxm
  // Not libfabric: the channel's own transport over plain TCP (channel/
  // stream_format.h), for commodity networks. Endpoint::Open refuses it.
  kStream,
};

// Removes the shm provider's region names in `directory` ("<pid>:<n>:<n>")
// whose process no longer exists; returns how many. Opening a shm endpoint
// does this for /dev/shm: the provider's own cleanup runs from signal
// handlers this library cannot keep (libfabric.h).
size_t RemoveStaleShmEndpoints(const std::string& directory);

// "shm", "tcp" or "verbs"; false for anything else.
bool ParseProvider(std::string_view name, Provider* provider);
const char* ProviderName(Provider provider);

struct EndpointOptions {
  Provider provider = Provider::kShm;
  // tcp and verbs: the local address to bind ("127.0.0.1", an interface's
  // address); empty: the provider's first choice.
  std::string node;
  // shm: copy through shared memory instead of cross-memory attach, which
  // measured 6x faster for small messages (FI_SHM_DISABLE_CMA=1). Applies
  // to the whole process: libfabric reads it once.
  bool shm_disable_cma = true;
  size_t completion_queue_entries = 4096;
  // Open the completion queue with a file descriptor to block on
  // (FI_WAIT_FD) where the provider has one (tcp: readable when a peer's
  // bytes or acknowledgements arrive, before this side's progress; shm has
  // none). Endpoint::wait_fd() says whether it was granted.
  bool wait_fd = false;
  // How long PostWrite retries a full transmit queue (driving progress)
  // before it gives up with BUSY.
  std::chrono::milliseconds post_timeout{1000};
};

// A registered buffer: what a peer needs to write into it, and what a local
// write needs to read from it.
class MemoryRegion {
 public:
  ~MemoryRegion();
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  void* descriptor() const { return descriptor_; }
  uint64_t key() const { return key_; }
  // The address a peer's write names for byte `offset` of this buffer.
  uint64_t RemoteAddress(size_t offset) const { return remote_base_ + offset; }

 private:
  friend class Endpoint;
  MemoryRegion() = default;
  struct fid_mr* mr_ = nullptr;
  char* data_ = nullptr;
  size_t size_ = 0;
  void* descriptor_ = nullptr;
  uint64_t key_ = 0;
  uint64_t remote_base_ = 0;
};

// What a peer publishes about one of its buffers.
struct RemoteBuffer {
  uint64_t address = 0;  // RemoteAddress(0)
  uint64_t key = 0;
  uint64_t size = 0;
};

class Endpoint {
 public:
  // Called once per finished write, with OK or the provider's error.
  using Completion = std::function<void(Status)>;

  static Status Open(const EndpointOptions& options,
                     std::unique_ptr<Endpoint>* endpoint);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // This endpoint's address, for a peer's AddPeer.
  const std::string& address() const { return address_; }
  // Makes a peer's address writable-to; returns its handle.
  Status AddPeer(std::string_view address, fi_addr_t* peer);
  void RemovePeer(fi_addr_t peer);

  // Registers `size` bytes at `data` (caller-owned, outliving the region)
  // for local reads and remote writes.
  Status Register(char* data, size_t size,
                  std::unique_ptr<MemoryRegion>* region);

  // Writes `size` bytes at `source` (inside `local`) to `remote_address`
  // of the peer's buffer with `remote_key`. `done` is called from Progress
  // once the write completed (or failed). The source bytes must stay
  // unchanged until then. BUSY if the transmit queue stays full for the
  // post timeout; CLOSED once aborted.
  //
  // What "completed" means: by default, that the source may be reused
  // (tcp reports that once the bytes are in the kernel's socket buffer,
  // before the peer has them). With `Semantics::kDelivered` the write
  // completes only once the bytes are in the peer's memory
  // (FI_DELIVERY_COMPLETE), which replication needs: a primary
  // acknowledges a write only once every backup holds it.
  enum class Semantics { kBuffered, kDelivered };
  Status PostWrite(fi_addr_t peer, const char* source, size_t size,
                   const MemoryRegion& local, uint64_t remote_address,
                   uint64_t remote_key, Completion done,
                   Semantics semantics = Semantics::kBuffered);
  // One write scattering the bytes at `source` (inside `local`, as long as
  // the targets together) over up to remote_targets_max() places of the
  // peer's buffers, in order: one post and one completion for all of them.
  struct RemoteTarget {
    uint64_t address = 0;
    uint64_t size = 0;
    uint64_t key = 0;
  };
  //
  // With `Room::kNow` a full transmit queue answers BUSY at once instead of
  // being retried for the post timeout: for a caller with other peers to
  // serve, which posts again later (the replication thread).
  enum class Room { kWait, kNow };
  Status PostWrite(fi_addr_t peer, const char* source,
                   const MemoryRegion& local,
                   std::span<const RemoteTarget> targets, Completion done,
                   Semantics semantics = Semantics::kBuffered,
                   Room room = Room::kWait);
  // The most places one write may scatter to (the provider's
  // rma_iov_limit: 4 for tcp and shm, 1 for verbs).
  size_t remote_targets_max() const { return remote_targets_max_; }

  // A check PostWrite makes now and then while the transmit queue stays
  // full (tcp;ofi_rxm keeps answering EAGAIN while it tries to reconnect to
  // a peer that died): true ends the wait with CLOSED. Set before use.
  void SetPeerGoneCheck(std::function<bool()> peer_gone) {
    peer_gone_ = std::move(peer_gone);
  }

  // Makes PostWrite refuse (CLOSED) from now on, including a call waiting
  // for room in the transmit queue: the peer is gone.
  void Abort() { aborted_.store(true, std::memory_order_release); }

  // Drives the provider: delivers writes peers make into our buffers and
  // completes our own writes. Returns how many of our writes completed.
  // Cheap when idle (one fi_cq_read).
  size_t Progress();

  // The completion queue's file descriptor (EndpointOptions::wait_fd), or
  // -1: readable once something arrived for this endpoint to progress.
  int wait_fd() const { return wait_fd_; }
  // Whether blocking on wait_fd() now is safe: false if events are pending
  // already (progress first). Without a wait fd, false.
  bool TryWait();

  // Writes posted but not completed yet.
  size_t outstanding() const {
    return outstanding_.load(std::memory_order_relaxed);
  }
  Provider provider() const { return options_.provider; }
  // The provider's name as libfabric reports it ("shm", "tcp;ofi_rxm").
  const std::string& provider_name() const { return provider_name_; }

 private:
  struct WriteContext;
  explicit Endpoint(const EndpointOptions& options);
  Status Init();
  void Track(WriteContext* context);
  // Unlinks and frees a write's context.
  void Finish(WriteContext* context);

  const EndpointOptions options_;
  const LibFabric* api_ = nullptr;
  struct fi_info* info_ = nullptr;
  struct fid_fabric* fabric_ = nullptr;
  struct fid_domain* domain_ = nullptr;
  struct fid_cq* cq_ = nullptr;
  struct fid_av* av_ = nullptr;
  struct fid_ep* ep_ = nullptr;
  bool virtual_addresses_ = false;
  std::string address_;
  std::string provider_name_;
  size_t remote_targets_max_ = 1;
  int wait_fd_ = -1;
  std::atomic<size_t> outstanding_{0};
  std::atomic<uint64_t> next_key_{1};
  std::atomic<bool> aborted_{false};
  std::function<bool()> peer_gone_;
  // Writes in flight, to free those never completed when closing.
  std::mutex in_flight_mutex_;
  WriteContext* in_flight_ = nullptr;  // a doubly linked list
};

}  // namespace kvs::fabric

#endif  // KVS_FABRIC_ENDPOINT_H_
