// The per-thread error message behind kvs_last_error_message().

#ifndef KVS_CAPI_LAST_ERROR_H_
#define KVS_CAPI_LAST_ERROR_H_

#include "kvs/kvs.h"
#include "util/status.h"

namespace kvs::capi {

// Records `status`'s message for kvs_last_error_message() on this thread
// (when it is an error) and returns its code, so C ABI functions can end
// with `return Report(status);`.
kvs_status Report(const Status& status);

}  // namespace kvs::capi

#endif  // KVS_CAPI_LAST_ERROR_H_
