// The service handle of the C ABI, shared by its fabric and client-door
// parts.

#ifndef KVS_CAPI_SERVICE_HANDLE_H_
#define KVS_CAPI_SERVICE_HANDLE_H_

#include "service/region_service.h"

struct kvs_service {
  kvs::service::RegionService service;
};

#endif  // KVS_CAPI_SERVICE_HANDLE_H_
