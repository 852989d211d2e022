// LibFabric: libfabric's exported entry points, loaded with dlopen on first
// use. libkvs does not link libfabric: the storage engine and the TCP
// transport work on hosts without it, and the fabric transport reports a
// clear error there ("install libfabric1"). Every other libfabric call is an
// inline function of its headers that dispatches through the objects these
// entry points create, so no further symbols are needed.
//
// Thread safety: Get() may be called from any thread.

#ifndef KVS_FABRIC_LIBFABRIC_H_
#define KVS_FABRIC_LIBFABRIC_H_

#include <rdma/fabric.h>
#include <signal.h>

#include <cstdint>
#include <iterator>
#include <string>

#include "util/status.h"

namespace kvs::fabric {

// The libfabric API version this code is written against (1.17, Debian 12).
inline constexpr uint32_t kApiVersion = FI_VERSION(1, 17);

// Keeps this process's signal handlers across a libfabric call that may
// install its own (loading it; the shm provider opening an endpoint
// installs SIGSEGV and SIGBUS handlers that unlink its names): the handlers
// in place when this is made are put back when it goes out of scope (or at
// Restore). A JVM takes SIGSEGV on purpose, so those handlers must not stay.
class KeptSignalHandlers {
 public:
  KeptSignalHandlers();
  ~KeptSignalHandlers();
  KeptSignalHandlers(const KeptSignalHandlers&) = delete;
  KeptSignalHandlers& operator=(const KeptSignalHandlers&) = delete;
  void Restore() const;

 private:
  static constexpr int kSignals[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
                                     SIGABRT, SIGTERM, SIGINT};
  struct sigaction saved_[std::size(kSignals)];
};

struct LibFabric {
  int (*getinfo)(uint32_t version, const char* node, const char* service,
                 uint64_t flags, const struct fi_info* hints,
                 struct fi_info** info);
  void (*freeinfo)(struct fi_info* info);
  struct fi_info* (*dupinfo)(const struct fi_info* info);
  int (*fabric)(struct fi_fabric_attr* attr, struct fid_fabric** fabric,
                void* context);
  const char* (*strerror)(int errnum);
  uint32_t (*version)(void);

  // "fi_write: Resource temporarily unavailable (-11)" for a libfabric
  // return code (negative).
  std::string Describe(const char* call, int code) const;

  // Loads libfabric.so.1 once; later calls return the same result.
  static Status Get(const LibFabric** library);
};

}  // namespace kvs::fabric

#endif  // KVS_FABRIC_LIBFABRIC_H_
