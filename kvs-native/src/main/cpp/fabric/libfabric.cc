#include "fabric/libfabric.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>

#include <iterator>
#include <mutex>

namespace kvs::fabric {
namespace {

template <typename Function>
bool Resolve(void* handle, const char* name, Function* function) {
  *function = reinterpret_cast<Function>(::dlsym(handle, name));
  return *function != nullptr;
}

}  // namespace

KeptSignalHandlers::KeptSignalHandlers() {
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    ::sigaction(kSignals[i], nullptr, &saved_[i]);
  }
}

KeptSignalHandlers::~KeptSignalHandlers() { Restore(); }

void KeptSignalHandlers::Restore() const {
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    ::sigaction(kSignals[i], &saved_[i], nullptr);
  }
}

std::string LibFabric::Describe(const char* call, int code) const {
  return std::string(call) + ": " + strerror(code < 0 ? -code : code) + " (" +
         std::to_string(code) + ")";
}

Status LibFabric::Get(const LibFabric** library) {
  static std::once_flag once;
  static LibFabric loaded;
  static Status status;
  std::call_once(once, [] {
    // libfabric and the libraries it loads install signal handlers: the shm
    // provider's (SIGSEGV, SIGBUS, SIGTERM, SIGINT) unlink its shared-memory
    // names, and libpsm2/libinfinipath (loaded with libfabric, whose psm
    // providers use them) print a backtrace and end the process. A JVM takes
    // SIGSEGV on purpose (implicit null checks, safepoints): with these
    // handlers the first such signal kills it or breaks the shm endpoints.
    // So the handlers in place before libfabric is loaded are put back once
    // its providers are initialized; the shm names a crashed process leaves
    // are removed by the next shm endpoint to open
    // (RemoveStaleShmEndpoints). libinfinipath installs its handlers as it
    // is loaded, before they can be put back: a JVM thread reaching a
    // safepoint meanwhile died of it (a server restarting under load).
    // Its documented switch keeps them out; libpsm2 installs its own only
    // when HFI_BACKTRACE asks for them.
    if (::getenv("IPATH_NO_BACKTRACE") == nullptr) {
      ::setenv("IPATH_NO_BACKTRACE", "1", 0);
    }
    KeptSignalHandlers signals;
    void* handle = ::dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* reason = ::dlerror();
      status = Status::NotFound(
          std::string("the fabric transport needs libfabric, which is not "
                      "installed (install the libfabric1 package, 1.17 or "
                      "newer): ") +
          (reason != nullptr ? reason : "libfabric.so.1 not found"));
      return;
    }
    if (!Resolve(handle, "fi_getinfo", &loaded.getinfo) ||
        !Resolve(handle, "fi_freeinfo", &loaded.freeinfo) ||
        !Resolve(handle, "fi_dupinfo", &loaded.dupinfo) ||
        !Resolve(handle, "fi_fabric", &loaded.fabric) ||
        !Resolve(handle, "fi_strerror", &loaded.strerror) ||
        !Resolve(handle, "fi_version", &loaded.version)) {
      status = Status::NotFound(
          "libfabric.so.1 lacks an entry point this library needs");
      return;
    }
    // Initialize the providers now (fi_getinfo), then give this process its
    // signal handlers back (see above).
    struct fi_info* all = nullptr;
    loaded.getinfo(kApiVersion, nullptr, nullptr, 0, nullptr, &all);
    if (all != nullptr) loaded.freeinfo(all);
    signals.Restore();
    const uint32_t installed = loaded.version();
    if (FI_MAJOR(installed) != FI_MAJOR(kApiVersion) ||
        FI_MINOR(installed) < FI_MINOR(kApiVersion)) {
      status =
          Status::NotFound("libfabric " + std::to_string(FI_MAJOR(installed)) +
                           "." + std::to_string(FI_MINOR(installed)) +
                           " is installed; 1.17 or newer "
                           "(same major version) is needed");
    }
  });
  *library = status.ok() ? &loaded : nullptr;
  return status;
}

}  // namespace kvs::fabric
