#include "util/gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace kvs {
namespace {

TEST(GateTest, WorkEntersUntilClosed) {
  Gate gate;
  EXPECT_TRUE(gate.Enter());
  gate.Leave();
  gate.Close();
  EXPECT_TRUE(gate.closed());
  EXPECT_FALSE(gate.Enter());
  Gate::Pass pass(&gate);
  EXPECT_FALSE(pass.entered());
}

TEST(GateTest, CloseWaitsForTheWorkInside) {
  Gate gate;
  Gate::Pass inside(&gate);
  ASSERT_TRUE(inside.entered());
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    gate.Close();
    closed.store(true);
  });
  // The closer must not get past Close while work is inside: it stays
  // blocked however long we look (and the gate refuses newcomers).
  while (!gate.closed()) std::this_thread::yield();
  EXPECT_FALSE(gate.Enter());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(closed.load());
  inside.Release();
  closer.join();
  EXPECT_TRUE(closed.load());
}

TEST(GateTest, ManyThreadsEnterAndLeaveWhileItCloses) {
  Gate gate;
  std::atomic<int> inside{0};
  std::atomic<bool> broken{false};
  std::atomic<bool> done{false};
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      while (true) {
        Gate::Pass pass(&gate);
        if (!pass.entered()) break;
        inside.fetch_add(1);
        if (done.load()) broken.store(true);  // inside after Close returned
        inside.fetch_sub(1);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  gate.Close();
  done.store(true);
  EXPECT_EQ(inside.load(), 0);
  for (auto& worker : workers) worker.join();
  EXPECT_FALSE(broken.load());
}

}  // namespace
}  // namespace kvs
