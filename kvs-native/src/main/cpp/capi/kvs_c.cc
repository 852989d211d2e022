// Implementation of the C ABI declared in include/kvs/kvs.h.
//
// This file only adapts: it converts between C types and the C++ classes that
// do the work, and keeps the per-thread last error message.

#include <string>

#include "capi/build_config.h"
#include "capi/last_error.h"
#include "kvs/kvs.h"
#include "util/crc32c.h"

namespace {

thread_local std::string last_error_message;

std::string MakeBuildInfo() {
  std::string info =
      "kvs " KVS_VERSION_STRING " (" KVS_BUILD_TYPE ", " KVS_COMPILER;
  info += ", sanitizers: " KVS_SANITIZERS;
  info += ", crc32c: ";
  info += kvs::crc32c::IsHardwareAccelerated() ? "sse4.2" : "portable";
  info += ")";
  return info;
}

}  // namespace

namespace kvs::capi {

kvs_status Report(const Status& status) {
  if (!status.ok()) {
    last_error_message.assign(status.message());
  }
  return static_cast<kvs_status>(status.code());
}

}  // namespace kvs::capi

extern "C" {

const char* kvs_last_error_message(void) { return last_error_message.c_str(); }

const char* kvs_version(void) { return KVS_VERSION_STRING; }

uint32_t kvs_abi_version(void) { return KVS_ABI_VERSION; }

const char* kvs_build_info(void) {
  static const std::string info = MakeBuildInfo();
  return info.c_str();
}

const char* kvs_status_name(kvs_status status) {
  switch (status) {
    case KVS_OK:
      return "OK";
    case KVS_NOT_FOUND:
      return "NOT_FOUND";
    case KVS_CORRUPTION:
      return "CORRUPTION";
    case KVS_IO_ERROR:
      return "IO_ERROR";
    case KVS_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case KVS_BUSY:
      return "BUSY";
    case KVS_CLOSED:
      return "CLOSED";
    case KVS_TOO_LARGE:
      return "TOO_LARGE";
    case KVS_INTERNAL:
      return "INTERNAL";
    case KVS_NOT_PRIMARY:
      return "NOT_PRIMARY";
    case KVS_WRONG_REGION:
      return "WRONG_REGION";
    case KVS_STALE_EPOCH:
      return "STALE_EPOCH";
    case KVS_OVERLOADED:
      return "OVERLOADED";
    case KVS_NOT_ENOUGH_REPLICAS:
      return "NOT_ENOUGH_REPLICAS";
    case KVS_STATUS_INT32_MAX_:
      break;
  }
  return "UNKNOWN";
}

uint32_t kvs_crc32c_extend(uint32_t crc, const void* data, size_t size) {
  return kvs::crc32c::Extend(crc, data, size);
}

int kvs_crc32c_is_hardware_accelerated(void) {
  return kvs::crc32c::IsHardwareAccelerated() ? 1 : 0;
}

}  // extern "C"
