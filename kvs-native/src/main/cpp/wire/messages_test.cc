#include "wire/messages.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "kvs/kvs.h"
#include "testing/vectors.h"

namespace kvs::wire {
namespace {

using testing::ToHex;
using Fields = std::map<std::string, std::string>;

std::string HexId(uint64_t id) {
  char text[17];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(id));
  return text;
}

// The fields of a decoded message in the vector file's notation.
// "-" for none, else client (16 hex digits):sequence:floor:retry (0 or 1).
std::string WriteIdField(const Request& request) {
  if (request.client_id == 0 && request.sequence == 0 && request.floor == 0 &&
      !request.retry) {
    return "-";
  }
  char client[17];
  std::snprintf(client, sizeof(client), "%016llx",
                static_cast<unsigned long long>(request.client_id));
  return std::string(client) + ":" + std::to_string(request.sequence) + ":" +
         std::to_string(request.floor) + ":" + (request.retry ? "1" : "0");
}

Fields Describe(const Request& request) {
  Fields fields{{"opcode", OpcodeName(request.opcode)},
                {"request_id", HexId(request.request_id)},
                {"region_id", HexId(request.region_id)},
                {"epoch", std::to_string(request.epoch)}};
  switch (request.opcode) {
    case Opcode::kNoop:
      break;
    case Opcode::kPut:
      fields["value"] = ToHex(request.value);
      [[fallthrough]];
    case Opcode::kGet:
    case Opcode::kDelete:
      fields["key"] = ToHex(request.key);
      break;
    case Opcode::kScan:
    case Opcode::kScanReverse:
      fields["start"] = ToHex(request.key);
      fields["end"] = request.end ? ToHex(*request.end) : "none";
      fields["limit"] = std::to_string(request.limit);
      fields["max_bytes"] = std::to_string(request.max_bytes);
      break;
    case Opcode::kMultiGet: {
      std::string keys;
      for (const auto key : request.keys) {
        keys += (keys.empty() ? "" : ",") + ToHex(key);
      }
      fields["keys"] = keys;
      break;
    }
    case Opcode::kCompareAndSet:
      fields["key"] = ToHex(request.key);
      fields["expected"] =
          request.expected ? ToHex(*request.expected) : "absent";
      fields["value"] =
          request.replacement ? ToHex(*request.replacement) : "absent";
      fields["write_id"] = WriteIdField(request);
      break;
    case Opcode::kIncrement:
      fields["key"] = ToHex(request.key);
      fields["delta"] = std::to_string(request.delta);
      fields["write_id"] = WriteIdField(request);
      break;
    case Opcode::kBatch: {
      // put:key:value or delete:key, comma-separated.
      std::string writes;
      for (const BatchWrite& write : request.writes) {
        writes +=
            (writes.empty() ? "" : ",") +
            (write.put ? "put:" + ToHex(write.key) + ":" + ToHex(write.value)
                       : "delete:" + ToHex(write.key));
      }
      fields["writes"] = writes;
      break;
    }
  }
  return fields;
}

Fields Describe(const Reply& reply) {
  Fields fields{
      {"opcode", OpcodeName(reply.opcode)},
      {"status", kvs_status_name(static_cast<kvs_status>(reply.status))},
      {"request_id", HexId(reply.request_id)}};
  if (reply.status != Status::Code::kOk) {
    fields["message"] = ToHex(reply.message);
    return fields;
  }
  switch (reply.opcode) {
    case Opcode::kGet:
      fields["value"] = ToHex(reply.value);
      break;
    case Opcode::kScan:
    case Opcode::kScanReverse: {
      fields["more"] = reply.more ? "1" : "0";
      std::string pairs;
      for (const auto& [key, value] : reply.pairs) {
        pairs += (pairs.empty() ? "" : ",") + ToHex(key) + ":" + ToHex(value);
      }
      fields["pairs"] = pairs.empty() ? "none" : pairs;
      break;
    }
    case Opcode::kMultiGet: {
      std::string values;
      for (const auto& value : reply.values) {
        values += (values.empty() ? "" : ",") +
                  (value ? ToHex(*value) : std::string("absent"));
      }
      fields["values"] = values;
      break;
    }
    case Opcode::kCompareAndSet:
      fields["applied"] = reply.applied ? "1" : "0";
      fields["current"] = reply.current ? ToHex(*reply.current) : "absent";
      fields["lsn"] = std::to_string(reply.lsn);
      break;
    case Opcode::kIncrement:
      fields["counter"] = std::to_string(reply.counter);
      fields["lsn"] = std::to_string(reply.lsn);
      break;
    default:
      break;
  }
  return fields;
}

TEST(WireMessagesTest, SharedVectorsDecodeAndReencodeExactly) {
  const auto vectors = testing::LoadWireVectors();
  ASSERT_GE(vectors.size(), 30u);
  for (const auto& vector : vectors) {
    SCOPED_TRACE(vector.name);
    std::string encoded;
    if (vector.request) {
      Request request;
      const Status status = DecodeRequest(vector.bytes, &request);
      if (vector.invalid) {
        EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
        EXPECT_NE(status.message().find("malformed message"),
                  std::string_view::npos);
        continue;
      }
      ASSERT_TRUE(status.ok()) << status.ToString();
      EXPECT_EQ(Describe(request), vector.fields);
      EncodeRequest(request, &encoded);
    } else {
      Reply reply;
      const Status status = DecodeReply(vector.bytes, &reply);
      if (vector.invalid) {
        EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
        continue;
      }
      ASSERT_TRUE(status.ok()) << status.ToString();
      EXPECT_EQ(Describe(reply), vector.fields);
      EncodeReply(reply, &encoded);
    }
    EXPECT_EQ(ToHex(encoded), ToHex(vector.bytes));
  }
}

TEST(WireMessagesTest, EveryTruncationOfAValidMessageIsRejected) {
  for (const auto& vector : testing::LoadWireVectors()) {
    if (vector.invalid) continue;
    SCOPED_TRACE(vector.name);
    for (size_t size = 0; size < vector.bytes.size(); ++size) {
      const std::string_view cut(vector.bytes.data(), size);
      Request request;
      Reply reply;
      EXPECT_FALSE(vector.request ? DecodeRequest(cut, &request).ok()
                                  : DecodeReply(cut, &reply).ok())
          << size;
    }
  }
}

TEST(WireMessagesTest, LargestMessagesRoundTrip) {
  const std::string key(kKeyBytesMax, 'k');
  const std::string value(kValueBytesMax, 'v');
  Request put;
  put.opcode = Opcode::kPut;
  put.request_id = 1;
  put.key = key;
  put.value = value;
  std::string bytes;
  EncodeRequest(put, &bytes);
  EXPECT_LE(bytes.size(), kMessageBytesMax);
  Request decoded;
  ASSERT_TRUE(DecodeRequest(bytes, &decoded).ok());
  EXPECT_EQ(decoded.value.size(), kValueBytesMax);
  // A scan reply at its limit in pairs still fits a message.
  Reply scan;
  scan.opcode = Opcode::kScan;
  scan.request_id = 2;
  for (uint32_t i = 0; i < kScanLimitMax; ++i) {
    scan.pairs.emplace_back(std::string_view(key).substr(0, 16),
                            std::string_view(value).substr(0, 100));
  }
  bytes.clear();
  EncodeReply(scan, &bytes);
  Reply back;
  ASSERT_TRUE(DecodeReply(bytes, &back).ok());
  EXPECT_EQ(back.pairs.size(), kScanLimitMax);
}

}  // namespace
}  // namespace kvs::wire
