// RegionService: serves wire-protocol requests (docs/PROTOCOL.md) from
// engine regions -- the request handler behind both transports. Regions are
// attached by id with their epoch; a request for a region not attached gets
// WRONG_REGION, one with another epoch STALE_EPOCH. (The cluster adds
// NOT_PRIMARY and key-range checks on top.)
//
// Thread safety: Handle may run on many threads at once; Attach and Detach
// may run concurrently with it.

#ifndef KVS_SERVICE_REGION_SERVICE_H_
#define KVS_SERVICE_REGION_SERVICE_H_

#include <cstdint>
#include <map>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "channel/server.h"
#include "lsm/region.h"
#include "wire/messages.h"

namespace kvs::service {

class RegionService final : public channel::RequestHandler {
 public:
  // Serves `region` (not owned; must outlive its attachment) as `region_id`
  // at `epoch`. Attaching again replaces the epoch or region.
  void Attach(uint64_t region_id, uint64_t epoch, lsm::Region* region);
  void Detach(uint64_t region_id);

  // channel::RequestHandler: a malformed request gets an INVALID_ARGUMENT
  // reply (with request id 0 if even the header is unreadable).
  void Handle(std::string_view request, std::string* reply) override;

  // Decodes, executes and encodes; for transports that hold a decoded
  // request already.
  void Execute(const wire::Request& request, std::string* reply);

 private:
  struct Attached {
    uint64_t epoch;
    lsm::Region* region;
  };
  mutable std::shared_mutex mutex_;
  std::map<uint64_t, Attached> regions_;
};

}  // namespace kvs::service

#endif  // KVS_SERVICE_REGION_SERVICE_H_
