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

// The keys it leaves holding a value: the counters and 25 of the 50
// compare-and-set keys.
inline constexpr uint64_t kConditionalWritesPairs = 27;
// The write id of the last increment of "counted" (value 7), which a
// promoted backup must know (lsm::WriteIds).
inline constexpr uint64_t kConditionalWriteClient = 0x5eed;
inline constexpr uint64_t kConditionalWriteSequence = 7;

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
  // Under write ids: a retry of an applied increment is answered as the
  // first attempt was and adds nothing.
  uint64_t floor = 0;
  for (uint64_t sequence = 1; sequence <= kConditionalWriteSequence;
       ++sequence) {
    wire::Request increment = base(wire::Opcode::kIncrement, "counted");
    increment.delta = 1;
    increment.client_id = kConditionalWriteClient;
    increment.sequence = sequence;
    const wire::Reply first = call(increment);
    ASSERT_EQ(first.status, Status::Code::kOk) << first.message;
    ASSERT_EQ(first.counter, static_cast<int64_t>(sequence));
    EXPECT_GT(first.lsn, floor);
    increment.retry = true;
    increment.floor = floor;
    const wire::Reply again = call(increment);
    ASSERT_EQ(again.status, Status::Code::kOk) << again.message;
    EXPECT_EQ(again.counter, static_cast<int64_t>(sequence));
    floor = first.lsn;
  }
}

}  // namespace kvs::testing

#endif  // KVS_TESTING_CONDITIONAL_WRITES_H_
