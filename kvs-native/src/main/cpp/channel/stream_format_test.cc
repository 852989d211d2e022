#include "channel/stream_format.h"

#include <gtest/gtest.h>

#include <string>

namespace kvs::channel {
namespace {

TEST(StreamFormatTest, FramesDecodeAsWritten) {
  std::string bytes;
  AppendFrame(FrameType::kMessage, 42, "payload", &bytes);
  FrameHeader header;
  ASSERT_TRUE(DecodeFrameHeader(bytes, /*server=*/true, &header).ok());
  EXPECT_EQ(header.type, FrameType::kMessage);
  EXPECT_EQ(header.id, 42u);
  EXPECT_EQ(header.payload_bytes, 7u);
  EXPECT_EQ(bytes.substr(kFrameHeaderBytes), "payload");

  bytes.clear();
  AppendWrite(7, /*key=*/3, /*offset=*/4096, "abc", &bytes);
  ASSERT_TRUE(DecodeFrameHeader(bytes, /*server=*/true, &header).ok());
  EXPECT_EQ(header.type, FrameType::kWrite);
  EXPECT_EQ(header.id, 7u);
  uint64_t key = 0, offset = 0;
  std::string_view written;
  ASSERT_TRUE(DecodeWrite(std::string_view(bytes).substr(kFrameHeaderBytes),
                          &key, &offset, &written)
                  .ok());
  EXPECT_EQ(key, 3u);
  EXPECT_EQ(offset, 4096u);
  EXPECT_EQ(written, "abc");
}

TEST(StreamFormatTest, MalformedHeadersAreRefusedWithTheirReason) {
  std::string frame;
  AppendFrame(FrameType::kReply, 1, "x", &frame);
  FrameHeader header;
  // Each end takes only its own types.
  EXPECT_TRUE(DecodeFrameHeader(frame, /*server=*/false, &header).ok());
  EXPECT_FALSE(DecodeFrameHeader(frame, /*server=*/true, &header).ok());
  const auto refused = [&](std::string bytes, const char* why) {
    const Status status = DecodeFrameHeader(bytes, /*server=*/false, &header);
    EXPECT_FALSE(status.ok()) << why;
    EXPECT_NE(status.ToString().find(why), std::string::npos)
        << status.ToString();
  };
  std::string bad = frame;
  bad[0] = 2;
  refused(bad, "version");
  bad = frame;
  bad[3] = 1;
  refused(bad, "reserved");
  bad = frame;
  bad[1] = 9;
  refused(bad, "type");
  bad = frame;
  bad[7] = 0x7f;  // a payload of about 2 GiB
  refused(bad, "above the limit");
  refused(frame.substr(0, 10), "cut short");
  std::string written;
  AppendFrame(FrameType::kWritten, 5, "x", &written);
  refused(written, "WRITTEN with a payload");
  std::string write;
  AppendFrame(FrameType::kWrite, 5, "short", &write);
  EXPECT_FALSE(DecodeFrameHeader(write, /*server=*/true, &header).ok());
}

}  // namespace
}  // namespace kvs::channel
