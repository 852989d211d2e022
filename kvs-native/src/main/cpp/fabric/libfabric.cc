#include "fabric/libfabric.h"

#include <dlfcn.h>
#include <signal.h>

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

std::string LibFabric::Describe(const char* call, int code) const {
  return std::string(call) + ": " + strerror(code < 0 ? -code : code) + " (" +
         std::to_string(code) + ")";
}

Status LibFabric::Get(const LibFabric** library) {
  static std::once_flag once;
  static LibFabric loaded;
  static Status status;
  std::call_once(once, [] {
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
    // Initialize the providers now, keeping this process's signal handlers:
    // the shm provider installs handlers for SIGSEGV, SIGBUS, SIGTERM and
    // SIGINT that unlink its shared-memory names before passing the signal
    // on. In a JVM, which takes SIGSEGV on purpose (implicit null checks,
    // safepoints), the first such signal would unlink every endpoint's name
    // and make the next peer lookup crash. The price of restoring them: a
    // process that crashes may leave its endpoints' files in /dev/shm.
    constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGTERM, SIGINT};
    struct sigaction saved[std::size(kSignals)];
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      ::sigaction(kSignals[i], nullptr, &saved[i]);
    }
    struct fi_info* all = nullptr;
    loaded.getinfo(kApiVersion, nullptr, nullptr, 0, nullptr, &all);
    if (all != nullptr) loaded.freeinfo(all);
    for (size_t i = 0; i < std::size(kSignals); ++i) {
      ::sigaction(kSignals[i], &saved[i], nullptr);
    }
    const uint32_t version = loaded.version();
    if (FI_MAJOR(version) != FI_MAJOR(kApiVersion) ||
        FI_MINOR(version) < FI_MINOR(kApiVersion)) {
      status =
          Status::NotFound("libfabric " + std::to_string(FI_MAJOR(version)) +
                           "." + std::to_string(FI_MINOR(version)) +
                           " is installed; 1.17 or newer "
                           "(same major version) is needed");
    }
  });
  *library = status.ok() ? &loaded : nullptr;
  return status;
}

}  // namespace kvs::fabric
