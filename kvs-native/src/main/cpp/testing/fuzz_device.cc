#include "testing/fuzz_device.h"

#include <algorithm>

#include "alloc/device_offset.h"
#include "util/check.h"
#include "util/coding.h"
#include "util/limits.h"

namespace kvs::testing {
namespace {

constexpr uint64_t kBlocksPerSegment =
    limits::segment_size_bytes / limits::io_alignment_bytes;
constexpr size_t kStripeHeaderBytes = 4;
// Reset writes zeros from here, in chunks.
constexpr char kZeros[64 * 1024] = {};

}  // namespace

bool SplitDeviceImage(std::string_view input, size_t params_bytes,
                      size_t stripe_count, std::string_view* params,
                      std::vector<Stripe>* stripes) {
  const size_t header_bytes = params_bytes + kStripeHeaderBytes * stripe_count;
  if (input.size() < header_bytes) {
    return false;
  }
  *params = input.substr(0, params_bytes);
  stripes->clear();
  std::string_view rest = input.substr(header_bytes);
  for (size_t i = 0; i < stripe_count; ++i) {
    const char* entry = input.data() + params_bytes + kStripeHeaderBytes * i;
    Stripe stripe;
    stripe.start_block = coding::DecodeFixed16(entry) % kBlocksPerSegment;
    const size_t room = limits::segment_size_bytes -
                        stripe.start_block * limits::io_alignment_bytes;
    const size_t length =
        std::min<size_t>({coding::DecodeFixed16(entry + 2), rest.size(), room});
    stripe.bytes = rest.substr(0, length);
    rest.remove_prefix(length);
    stripes->push_back(stripe);
  }
  return true;
}

std::string JoinDeviceImage(std::string_view params,
                            const std::vector<Stripe>& stripes) {
  std::string out(params);
  for (const Stripe& stripe : stripes) {
    KVS_CHECK(stripe.start_block < kBlocksPerSegment);
    KVS_CHECK(stripe.bytes.size() <= UINT16_MAX);
    char entry[kStripeHeaderBytes];
    coding::EncodeFixed16(entry, static_cast<uint16_t>(stripe.start_block));
    coding::EncodeFixed16(entry + 2,
                          static_cast<uint16_t>(stripe.bytes.size()));
    out.append(entry, sizeof(entry));
  }
  for (const Stripe& stripe : stripes) {
    out.append(stripe.bytes);
  }
  return out;
}

// Forwards to a MemoryDevice handle and tells the FuzzDevice what it wrote.
class RecordingFile final : public io::File {
 public:
  RecordingFile(FuzzDevice* owner, std::unique_ptr<io::File> target)
      : owner_(owner), target_(std::move(target)) {}

  Status Read(uint64_t offset, size_t size, char* out) override {
    return target_->Read(offset, size, out);
  }
  Status Write(uint64_t offset, std::string_view data) override {
    owner_->Record(offset, data.size());
    return target_->Write(offset, data);
  }
  Status Sync() override { return target_->Sync(); }
  // The device never grows, so that Reset can restore it exactly.
  Status Grow(uint64_t size_bytes) override {
    if (size_bytes > target_->Size()) {
      return Status::IoError("fuzz device cannot grow");
    }
    return Status::Ok();
  }
  uint64_t Size() const override { return target_->Size(); }
  bool direct_io() const override { return target_->direct_io(); }
  uint64_t read_alignment_bytes() const override {
    return target_->read_alignment_bytes();
  }

 private:
  FuzzDevice* const owner_;
  const std::unique_ptr<io::File> target_;
};

FuzzDevice::FuzzDevice(uint64_t segment_count) : segment_count_(segment_count) {
  const uint64_t size_bytes = segment_count * limits::segment_size_bytes;
  device_ = MemoryDevice::Create(size_bytes);
  raw_ = device_->Open();
  KVS_CHECK(raw_->Grow(size_bytes).ok());
}

void FuzzDevice::Load(uint64_t first_segment,
                      const std::vector<Stripe>& stripes) {
  for (size_t i = 0; i < stripes.size(); ++i) {
    const uint64_t segment = first_segment + i;
    if (segment >= segment_count_ || stripes[i].bytes.empty()) {
      continue;
    }
    const uint64_t offset = alloc::DeviceOffset(
        segment, stripes[i].start_block * limits::io_alignment_bytes);
    Record(offset, stripes[i].bytes.size());
    KVS_CHECK(raw_->Write(offset, stripes[i].bytes).ok());
  }
  KVS_CHECK(raw_->Sync().ok());
}

std::unique_ptr<io::File> FuzzDevice::Open() {
  return std::make_unique<RecordingFile>(this, device_->Open());
}

void FuzzDevice::Reset() {
  for (const auto& [offset, size] : written_) {
    // Writes through a handle may have failed past the end; clamp to the
    // device so that the reset itself cannot fail.
    const uint64_t device_bytes = raw_->Size();
    if (offset >= device_bytes) {
      continue;
    }
    uint64_t done = 0;
    const uint64_t length = std::min<uint64_t>(size, device_bytes - offset);
    while (done < length) {
      const size_t chunk = std::min<uint64_t>(length - done, sizeof(kZeros));
      KVS_CHECK(raw_->Write(offset + done, {kZeros, chunk}).ok());
      done += chunk;
    }
  }
  written_.clear();
  KVS_CHECK(raw_->Sync().ok());
}

void FuzzDevice::Record(uint64_t offset, size_t size) {
  written_.emplace_back(offset, size);
}

}  // namespace kvs::testing
