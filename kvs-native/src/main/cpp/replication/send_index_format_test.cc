#include "replication/send_index_format.h"

#include <gtest/gtest.h>

#include <string>

#include "replication/replication_format.h"

namespace kvs::replication {
namespace {

IndexControl RoundTrip(const IndexControl& control) {
  std::string bytes;
  EncodeIndexControl(control, &bytes);
  EXPECT_TRUE(IsIndexControl(bytes));
  IndexControl decoded;
  const Status status = DecodeIndexControl(bytes, &decoded);
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::string again;
  EncodeIndexControl(decoded, &again);
  EXPECT_EQ(again, bytes);
  return decoded;
}

IndexControl Install() {
  IndexControl install;
  install.type = IndexControlType::kInstallLevel;
  install.region_id = 9;
  install.epoch = 4;
  install.level = 2;
  install.emptied = 1;
  install.descriptor.root = (77ull << 21) + 8192;
  install.descriptor.entries = 1000;
  install.descriptor.kv_bytes = 123456;
  install.descriptor.index_segments = {77, 78};
  install.descriptor.bloom_bytes = 1250;
  install.descriptor.bloom_chunks = {(78ull << 21) + 65536};
  install.descriptor.medium_segments = {90};
  install.compacted_lsn = (1ull << 40) + 7;
  return install;
}

TEST(SendIndexFormatTest, EveryMessageRoundTrips) {
  IndexControl flush;
  flush.type = IndexControlType::kFlushTail;
  flush.region_id = 9;
  flush.epoch = 4;
  flush.kind = log::LogKind::kMedium;
  flush.sealed = true;
  flush.bytes = 2u << 20;
  flush.chain_index = 17;
  flush.primary_segment = 4242;
  flush.buffer = 1;
  flush.starts = true;
  const IndexControl f = RoundTrip(flush);
  EXPECT_EQ(f.kind, log::LogKind::kMedium);
  EXPECT_TRUE(f.sealed);
  EXPECT_TRUE(f.starts);
  EXPECT_EQ(f.chain_index, 17u);
  EXPECT_EQ(f.primary_segment, 4242u);
  EXPECT_EQ(f.bytes, 2u << 20);
  EXPECT_EQ(f.buffer, 1u);

  IndexControl ship;
  ship.type = IndexControlType::kShipSegment;
  ship.primary_segment = 77;
  ship.bytes = 65536;
  ship.level = 63;  // the drain's or a rename's level number
  EXPECT_EQ(RoundTrip(ship).bytes, 65536u);
  EXPECT_EQ(RoundTrip(ship).level, 63u);
  std::string ship_bytes;
  EncodeIndexControl(ship, &ship_bytes);
  ship_bytes[36] = 64;  // level 64
  IndexControl ship_decoded;
  EXPECT_EQ(DecodeIndexControl(ship_bytes, &ship_decoded).code(),
            Status::Code::kInvalidArgument);

  const IndexControl i = RoundTrip(Install());
  EXPECT_EQ(i.level, 2u);
  EXPECT_EQ(i.emptied, std::optional<uint32_t>(1));
  EXPECT_EQ(i.compacted_lsn, (1ull << 40) + 7);
  EXPECT_EQ(i.descriptor.Encode(), Install().descriptor.Encode());
  IndexControl no_source = Install();
  no_source.emptied.reset();
  EXPECT_FALSE(RoundTrip(no_source).emptied.has_value());

  IndexControl trim;
  trim.type = IndexControlType::kTrim;
  trim.trimmed = {{log::LogKind::kLarge, 5, 3}, {log::LogKind::kSmall, 6, 0}};
  EXPECT_EQ(RoundTrip(trim).trimmed, trim.trimmed);
}

TEST(SendIndexFormatTest, MalformedMessagesAreRefused) {
  std::string install;
  EncodeIndexControl(Install(), &install);
  IndexControl decoded;
  auto refused = [&](std::string bytes) {
    return DecodeIndexControl(bytes, &decoded).code() ==
           Status::Code::kInvalidArgument;
  };
  EXPECT_TRUE(refused(install.substr(0, install.size() - 1)));  // cut
  EXPECT_TRUE(refused(install + "x"));                          // trailing
  std::string bad_level = install;
  bad_level[24] = 64;  // level 64
  EXPECT_TRUE(refused(bad_level));
  std::string same_level = install;
  same_level[28] = 2;  // emptied == level
  EXPECT_TRUE(refused(same_level));
  std::string bad_descriptor = install;
  bad_descriptor.back() ^= 0x7f;
  bad_descriptor[48] = 9;  // an unknown descriptor version
  EXPECT_TRUE(refused(bad_descriptor));

  IndexControl flush;
  flush.type = IndexControlType::kFlushTail;
  std::string flush_bytes;
  EncodeIndexControl(flush, &flush_bytes);
  std::string bad_kind = flush_bytes;
  bad_kind[24] = 4;
  EXPECT_TRUE(refused(bad_kind));
  std::string too_many = flush_bytes;
  too_many[28] = 1;
  too_many[30] = 0x20;  // 2 MiB + 1
  EXPECT_TRUE(refused(too_many));
  std::string reserved = flush_bytes;
  reserved[6] = 1;
  EXPECT_TRUE(refused(reserved));
  // Another version is refused, and the refusal says so.
  std::string newer = flush_bytes;
  newer[5] = 3;
  IndexControl newer_decoded;
  const Status status = DecodeIndexControl(newer, &newer_decoded);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("version 3"), std::string_view::npos);
  // Version 1 (before SHIP-SEGMENT named its level) is refused too.
  std::string older = flush_bytes;
  older[5] = 1;
  EXPECT_FALSE(DecodeIndexControl(older, &newer_decoded).ok());
  std::string bad_starts = flush_bytes;
  bad_starts[26] = 2;
  EXPECT_TRUE(refused(bad_starts));
  std::string bad_buffer = flush_bytes;
  bad_buffer[48] = 2;  // a log has buffers 0 and 1
  EXPECT_TRUE(refused(bad_buffer));

  IndexControl trim;
  trim.type = IndexControlType::kTrim;
  std::string empty_trim;
  EncodeIndexControl(trim, &empty_trim);
  EXPECT_TRUE(refused(empty_trim));  // no segment

  // The build-index messages are not Send-Index messages, and back.
  std::string open;
  EncodeControl({ControlType::kOpen, 9, 4, 0, 0, 0, std::string()}, &open);
  EXPECT_FALSE(IsIndexControl(open));
  EXPECT_TRUE(refused(open));
  Control control;
  EXPECT_FALSE(DecodeControl(flush_bytes, &control).ok());
}

}  // namespace
}  // namespace kvs::replication
