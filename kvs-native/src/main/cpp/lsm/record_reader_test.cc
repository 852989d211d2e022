#include "lsm/record_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <vector>

#include "alloc/device_offset.h"
#include "io/aligned_buffer.h"
#include "testing/log_segments.h"
#include "testing/memory_device.h"
#include "util/limits.h"

namespace kvs::lsm {
namespace {

// Forwards to a file and counts the device requests of batched reads.
class RequestCountingFile final : public io::File {
 public:
  explicit RequestCountingFile(io::File* target) : target_(target) {}
  Status Read(uint64_t offset, size_t size, char* out) override {
    return target_->Read(offset, size, out);
  }
  Status ReadMany(std::span<io::ReadOp> ops) override {
    batched_requests += ops.size();
    return target_->ReadMany(ops);
  }
  Status Write(uint64_t offset, std::string_view data) override {
    return target_->Write(offset, data);
  }
  Status Sync() override { return target_->Sync(); }
  Status Grow(uint64_t size_bytes) override {
    return target_->Grow(size_bytes);
  }
  uint64_t Size() const override { return target_->Size(); }
  bool direct_io() const override { return target_->direct_io(); }

  std::atomic<uint64_t> batched_requests{0};

 private:
  io::File* const target_;
};

struct Written {
  std::string key;
  std::string value;
  uint64_t device_offset = 0;
  uint32_t size = 0;
};

class RecordReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = testing::MemoryDevice::Create(16ull << 20);
    file_ = device_->Open();
    ASSERT_TRUE(file_->Grow(4 * limits::segment_size_bytes).ok());
  }

  // Writes a medium-log segment holding a record per value, at `segment`.
  void WriteSegment(uint64_t segment, const std::vector<std::string>& values,
                    std::vector<Written>* written) {
    testing::LogSegment log(log::LogKind::kMedium, segment, 1000 + segment);
    for (size_t i = 0; i < values.size(); ++i) {
      Written record;
      record.key = "key-" + std::to_string(segment) + "-" + std::to_string(i);
      record.value = values[i];
      const size_t before = log.bytes().size();
      log.Put(i + 1, record.key, record.value);
      record.device_offset = alloc::DeviceOffset(segment, before);
      record.size = static_cast<uint32_t>(log.bytes().size() - before);
      written->push_back(std::move(record));
    }
    io::AlignedBuffer bytes(io::AlignedBuffer::RoundUp(log.bytes().size()));
    std::memset(bytes.data(), 0, bytes.size());
    std::memcpy(bytes.data(), log.bytes().data(), log.bytes().size());
    ASSERT_TRUE(file_->Write(alloc::SegmentStart(segment), bytes.view()).ok());
  }

  std::shared_ptr<testing::MemoryDevice> device_;
  std::unique_ptr<io::File> file_;
};

TEST_F(RecordReaderTest, NeighbouringRecordsOfABatchAreReadByOneRequest) {
  std::vector<Written> written;
  WriteSegment(1, std::vector<std::string>(20, std::string(100, 'm')),
               &written);
  WriteSegment(2, {std::string(900, 'L')}, &written);
  RequestCountingFile counting(file_.get());
  RecordReader reader(&counting);
  std::vector<std::string> values(written.size());
  std::vector<RecordReader::ValueRead> reads;
  for (size_t i = 0; i < written.size(); ++i) {
    reads.push_back({written[i].device_offset, written[i].size, written[i].key,
                     &values[i]});
  }
  std::shuffle(reads.begin(), reads.end(), std::mt19937(5));
  ASSERT_TRUE(reader.ReadValues(reads).ok());
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(values[i], written[i].value) << i;
  }
  // The twenty neighbours in one request, the record of the other segment
  // in its own.
  EXPECT_EQ(counting.batched_requests.load(), 2u);
}

TEST_F(RecordReaderTest, RecordsFarApartAreReadByRequestsOfTheirOwn) {
  std::vector<Written> written;
  // A record, 12 KiB of another one between, a record.
  WriteSegment(
      1,
      {std::string(50, 'a'), std::string(12 << 10, 'b'), std::string(50, 'c')},
      &written);
  RequestCountingFile counting(file_.get());
  RecordReader reader(&counting);
  std::string first;
  std::string last;
  const RecordReader::ValueRead reads[] = {
      {written[0].device_offset, written[0].size, written[0].key, &first},
      {written[2].device_offset, written[2].size, written[2].key, &last}};
  ASSERT_TRUE(reader.ReadValues(reads).ok());
  EXPECT_EQ(first, written[0].value);
  EXPECT_EQ(last, written[2].value);
  EXPECT_EQ(counting.batched_requests.load(), 2u);
  // A record read for another key is refused, coalesced or not.
  std::string wrong;
  const RecordReader::ValueRead mixed[] = {
      {written[0].device_offset, written[0].size, written[0].key, &first},
      {written[1].device_offset, written[1].size, written[0].key, &wrong}};
  EXPECT_TRUE(reader.ReadValues(mixed).IsCorruption());
}

}  // namespace
}  // namespace kvs::lsm
