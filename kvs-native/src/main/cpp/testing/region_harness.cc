#include "testing/region_harness.h"

namespace kvs::testing {

RegionHarness::RegionHarness(uint64_t capacity_bytes,
                             const lsm::RegionOptions& options)
    : options_(options), device_(MemoryDevice::Create(capacity_bytes)) {
  status_ = alloc::Volume::Create(device_->Open(), {}, &volume_);
  if (!status_.ok()) return;
  MakeContext();
  status_ = lsm::Region::Create(context_, "r", 1, options_, &region_);
}

RegionHarness::~RegionHarness() { Release(); }

void RegionHarness::MakeContext() {
  sync_group_ = std::make_unique<io::SyncGroup>(volume_->file());
  nodes_ = std::make_unique<lsm::NodeCache>(volume_->file(), 8 << 20);
  records_ = std::make_unique<lsm::RecordReader>(volume_->file());
  context_.volume = volume_.get();
  context_.sync_group = sync_group_.get();
  context_.nodes = nodes_.get();
  context_.records = records_.get();
  context_.compactions = &pool_;
  if (hooks_) hooks_(&context_);
}

void RegionHarness::Release() {
  region_.reset();
  nodes_.reset();
  records_.reset();
  sync_group_.reset();
  volume_.reset();
}

void RegionHarness::CrashAndReopen(MemoryDevice::CrashMode mode) {
  // The crash comes first: nothing the objects do on the way out (a
  // destructor's sync) reaches the device.
  device_->Crash(mode);
  Release();
  Open();
}

void RegionHarness::CloseAndReopen() {
  Release();
  Open();
}

void RegionHarness::Open() {
  status_ = alloc::Volume::Open(device_->Open(), {}, &volume_);
  if (!status_.ok()) return;
  MakeContext();
  status_ = lsm::Region::Open(context_, "r", 1, options_, &region_);
}

std::string RegionHarness::GetOrStatus(std::string_view key) const {
  std::string value;
  const Status status = region_->Get(key, &value);
  return status.ok() ? value : status.ToString();
}

}  // namespace kvs::testing
