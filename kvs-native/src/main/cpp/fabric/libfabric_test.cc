#include "fabric/libfabric.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <iterator>
#include <memory>
#include <thread>

#include "fabric/endpoint.h"

namespace kvs::fabric {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};

void ThisProcessHandler(int, siginfo_t*, void*) {}

// The first of kSignals whose handler is not ThisProcessHandler, or 0.
int Replaced() {
  for (const int signal : kSignals) {
    struct sigaction action {};
    ::sigaction(signal, nullptr, &action);
    if ((action.sa_flags & SA_SIGINFO) == 0 ||
        action.sa_sigaction != &ThisProcessHandler) {
      return signal;
    }
  }
  return 0;
}

// Watches this process's handlers from another thread while `action` runs:
// the first signal whose handler was replaced at any moment, or 0.
template <typename Action>
int ReplacedWhile(Action action) {
  std::atomic<bool> done{false};
  std::atomic<int> replaced{0};
  std::thread watcher([&] {
    while (!done.load()) {
      if (const int signal = Replaced()) replaced.store(signal);
    }
  });
  action();
  done.store(true);
  watcher.join();
  return replaced.load();
}

// A JVM takes SIGSEGV on purpose (safepoints, implicit null checks), from
// any thread at any time. Loading libfabric (and the libraries it loads)
// never puts another handler in place, not even for a moment (libinfinipath's
// ended the process); the shm provider's, installed as the process's first
// shm endpoint opens, are removed before the open returns. CTest runs each test
// in a process of its own, so libfabric is loaded here for the first time.
TEST(LibFabricTest, ItNeverLeavesHandlersOfItsOwnInThisProcess) {
  struct sigaction ours {};
  ours.sa_sigaction = &ThisProcessHandler;
  ours.sa_flags = SA_SIGINFO;
  struct sigaction saved[std::size(kSignals)];
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    ASSERT_EQ(::sigaction(kSignals[i], &ours, &saved[i]), 0);
  }
  Status loaded;
  const int while_loading = ReplacedWhile([&] {
    const LibFabric* library = nullptr;
    loaded = LibFabric::Get(&library);
  });
  std::unique_ptr<Endpoint> first, second;
  EndpointOptions options;
  options.provider = Provider::kShm;
  const Status opened = Endpoint::Open(options, &first);
  const int after_open = Replaced();
  const int while_opening_another =
      ReplacedWhile([&] { (void)Endpoint::Open(options, &second); });
  first.reset();
  second.reset();
  const int after_close = Replaced();
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    ::sigaction(kSignals[i], &saved[i], nullptr);
  }
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  EXPECT_EQ(while_loading, 0) << "replaced while loading libfabric";
  EXPECT_EQ(after_open, 0) << "replaced by opening an shm endpoint";
  EXPECT_EQ(after_close, 0) << "replaced by closing shm endpoints";
  // shm installs its handlers once per process (libfabric 1.17): later
  // endpoints open without that window.
  EXPECT_EQ(while_opening_another, 0) << "replaced while opening another";
}

}  // namespace
}  // namespace kvs::fabric
