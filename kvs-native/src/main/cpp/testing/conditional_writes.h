// Test helper: conditional writes (compare-and-set, increment) of region 7
// through a primary's service, for the replication suites: each checks what
// it decided as it goes, and the suites compare what the backup holds after.

#ifndef KVS_TESTING_CONDITIONAL_WRITES_H_
#define KVS_TESTING_CONDITIONAL_WRITES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "wire/messages.h"

namespace kvs::testing {

// The keys it leaves holding a value: the counter and 25 of the 50
// compare-and-set keys.
inline constexpr uint64_t kConditionalWritesPairs = 26;

// Conditional writes through the primary's service: what each decided
// reaches the backup, and a compare-and-set that did not apply writes
// nothing there.
inline void ConditionalWrites(
    const std::function<wire::Reply(wire::Request)>& call, uint64_t epoch) {
  const auto base = [epoch](wire::Opcode opcode, std::string_view key) {
    wire::Request request;
    request.opcode = opcode;
    request.region_id = 7;
    request.epoch = epoch;
    request.key = key;
    return request;
  };
  for (int i = 1; i <= 100; ++i) {
    wire::Request increment = base(wire::Opcode::kIncrement, "counter");
    increment.delta = 1;
    const wire::Reply reply = call(increment);
    ASSERT_EQ(reply.status, Status::Code::kOk) << reply.message;
    ASSERT_EQ(reply.counter, i);
  }
  const auto cas = [&](std::string_view key,
                       std::optional<std::string_view> expected,
                       std::optional<std::string_view> replacement) {
    wire::Request request = base(wire::Opcode::kCompareAndSet, key);
    request.expected = expected;
    request.replacement = replacement;
    const wire::Reply reply = call(request);
    EXPECT_EQ(reply.status, Status::Code::kOk) << reply.message;
    return reply;
  };
  for (int i = 0; i < 50; ++i) {
    const std::string key = "cas" + std::to_string(i);
    EXPECT_TRUE(cas(key, std::nullopt, "one").applied);
    const wire::Reply taken = cas(key, std::nullopt, "other");
    EXPECT_FALSE(taken.applied);
    EXPECT_EQ(taken.current.value_or("?"), "one");
    EXPECT_TRUE(cas(key, "one", "two").applied);
    EXPECT_FALSE(cas(key, "one", "three").applied);
    if (i % 2 == 0) {
      EXPECT_TRUE(cas(key, "two", std::nullopt).applied);
    }
  }
}

}  // namespace kvs::testing

#endif  // KVS_TESTING_CONDITIONAL_WRITES_H_
