// The service handle of the C ABI, shared by its fabric and client-door
// parts.

#ifndef KVS_CAPI_SERVICE_HANDLE_H_
#define KVS_CAPI_SERVICE_HANDLE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include "service/region_service.h"

struct kvs_service {
  // Replies of kvs_service_submit that came after the call returned
  // (declared first: the service, destroyed first, settles its writes).
  // Bounded by its caller, which must bound the requests it submitted and
  // has not taken back (as the client door bounds its connections' in
  // flight, docs/OPERATIONS.md "Bounds and overload").
  std::mutex replies_mutex;
  std::condition_variable replies_ready;
  std::deque<std::pair<uint64_t, std::string>> replies;
  kvs::service::RegionService service;
};

#endif  // KVS_CAPI_SERVICE_HANDLE_H_
