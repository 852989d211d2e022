#include "channel/message_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "util/coding.h"
#include "util/crc32c.h"

namespace kvs::channel {
namespace {

// A unit-aligned buffer, as registered memory is.
struct Buffer {
  explicit Buffer(size_t size) : bytes(size + kUnitBytes, 0) {}
  char* data() {
    auto address = reinterpret_cast<uintptr_t>(bytes.data());
    return bytes.data() + (kUnitBytes - address % kUnitBytes) % kUnitBytes;
  }
  std::vector<char> bytes;
};

std::string Payload(size_t size) {
  std::string payload(size, '\0');
  for (size_t i = 0; i < size; ++i) payload[i] = static_cast<char>(i * 31 + 7);
  return payload;
}

TEST(MessageFormatTest, MessagesOfEverySizeRoundTrip) {
  for (const size_t size : {0, 1, 55, 59, 60, 61, 64, 4096, 1 << 20}) {
    SCOPED_TRACE(size);
    const std::string payload = Payload(size);
    Buffer buffer(MessageBytes(size) + 128);
    MessageHeader header;
    header.kind = MessageKind::kRequest;
    header.request_id = 0x1122334455667788ull;
    header.reply_offset = 4096;
    header.reply_capacity = 512;
    header.sequence = 77;
    EncodeMessage(header, payload, buffer.data());
    EXPECT_EQ(MessageBytes(size) % kUnitBytes, 0u);
    EXPECT_GE(MessageBytes(size), kHeaderBytes + size);

    PollResult result;
    MessageHeader found;
    std::string_view body;
    ASSERT_TRUE(PollMessage(buffer.data(), MessageBytes(size), 77, &result,
                            &found, &body)
                    .ok());
    ASSERT_EQ(result, PollResult::kComplete);
    EXPECT_EQ(body, payload);
    EXPECT_EQ(found.request_id, header.request_id);
    EXPECT_EQ(found.reply_offset, 4096u);
    EXPECT_EQ(found.reply_capacity, 512u);
    EXPECT_EQ(found.message_bytes, MessageBytes(size));
    // Expecting another sequence number, the same bytes are nothing.
    ASSERT_TRUE(PollMessage(buffer.data(), MessageBytes(size), 78, &result,
                            &found, &body)
                    .ok());
    EXPECT_EQ(result, PollResult::kNothing);
    ClearMessage(buffer.data(), MessageBytes(size));
    ASSERT_TRUE(PollMessage(buffer.data(), MessageBytes(size), 77, &result,
                            &found, &body)
                    .ok());
    EXPECT_EQ(result, PollResult::kNothing);
  }
}

// libfabric does not order the bytes of one write: land a message in
// random pieces and poll after each. Until the last piece of the header,
// payload and tail marker has landed, the poll must say nothing or
// incomplete -- never complete, never corrupt; then complete (padding
// carries nothing).
TEST(MessageFormatTest, AMessageLandingInAnyOrderIsOnlySeenWhole) {
  std::mt19937 random(5);
  for (int round = 0; round < 200; ++round) {
    const size_t size = random() % 3000;
    const std::string payload = Payload(size);
    const size_t bytes = MessageBytes(size);
    Buffer source(bytes), target(bytes);
    MessageHeader header;
    header.kind = MessageKind::kReply;
    header.sequence = static_cast<uint32_t>(round);
    EncodeMessage(header, payload, source.data());
    // Stale bytes of an earlier lap where the message lands.
    std::memset(target.data(), 0x5a, bytes);
    std::vector<size_t> pieces;
    for (size_t at = 0; at < bytes; at += 4) pieces.push_back(at);
    std::shuffle(pieces.begin(), pieces.end(), random);
    auto meaningful = [&](size_t at) {
      return at < kHeaderBytes + size ||
             (size > 0 && at >= bytes - kTailMarkerBytes);
    };
    size_t meaningful_left = 0;
    for (const size_t at : pieces) meaningful_left += meaningful(at) ? 1 : 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (meaningful(pieces[i])) --meaningful_left;
      std::memcpy(target.data() + pieces[i], source.data() + pieces[i], 4);
      PollResult result;
      MessageHeader found;
      std::string_view body;
      const Status status = PollMessage(target.data(), bytes, header.sequence,
                                        &result, &found, &body);
      ASSERT_TRUE(status.ok()) << status.ToString();
      if (meaningful_left > 0) {
        ASSERT_NE(result, PollResult::kComplete) << "piece " << i;
      } else {
        ASSERT_EQ(result, PollResult::kComplete);
        ASSERT_EQ(body, payload);
      }
    }
  }
}

// Re-seals a damaged header with a valid checksum and marker, as a buggy
// or hostile peer could send it.
void Reseal(char* at, uint32_t sequence) {
  coding::EncodeFixed32(at + 56, crc32c::Value(at, 56));
  coding::EncodeFixed32(at + 60, kReceiveMarker ^ sequence);
}

TEST(MessageFormatTest, WellSealedButWrongHeadersAreCorruption) {
  const std::string payload = Payload(100);
  const size_t bytes = MessageBytes(payload.size());
  auto poll = [&](auto damage) {
    Buffer buffer(bytes);
    MessageHeader header;
    header.sequence = 9;
    EncodeMessage(header, payload, buffer.data());
    damage(buffer.data());
    Reseal(buffer.data(), 9);
    PollResult result;
    MessageHeader found;
    std::string_view body;
    return PollMessage(buffer.data(), bytes, 9, &result, &found, &body);
  };
  EXPECT_TRUE(poll([](char*) {}).ok());
  EXPECT_TRUE(poll([](char* at) { at[0] = 'X'; }).IsCorruption());  // magic
  EXPECT_TRUE(poll([](char* at) { at[4] = 2; }).IsCorruption());    // version
  EXPECT_TRUE(poll([](char* at) { at[5] = 9; }).IsCorruption());    // kind
  EXPECT_TRUE(poll([](char* at) { at[50] = 1; }).IsCorruption());   // reserved
  // A payload size that runs past the buffer's end.
  EXPECT_TRUE(poll([](char* at) {
                coding::EncodeFixed32(at + 8, 1 << 30);
              }).IsCorruption());
  // Sizes that disagree with each other.
  EXPECT_TRUE(poll([](char* at) {
                coding::EncodeFixed32(at + 36, 64);
              }).IsCorruption());
}

}  // namespace
}  // namespace kvs::channel
