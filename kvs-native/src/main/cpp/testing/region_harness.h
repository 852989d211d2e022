// Test helper: one region on an in-memory device (testing/memory_device.h),
// with what a region needs from an engine, and crashes of either kind
// followed by a reopen.

#ifndef KVS_TESTING_REGION_HARNESS_H_
#define KVS_TESTING_REGION_HARNESS_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "alloc/volume.h"
#include "io/sync_group.h"
#include "lsm/node_cache.h"
#include "lsm/record_reader.h"
#include "lsm/region.h"
#include "testing/memory_device.h"
#include "util/thread_pool.h"

namespace kvs::testing {

class RegionHarness {
 public:
  // A new volume on a device that may grow to `capacity_bytes`, holding
  // region "r" (id 1) with `options`.
  RegionHarness(uint64_t capacity_bytes, const lsm::RegionOptions& options);
  ~RegionHarness();

  // Whether construction (or the last reopen) succeeded, and why not.
  const Status& status() const { return status_; }

  // The device loses what `mode` says, then the volume and region are
  // opened again; status() tells how that went.
  void CrashAndReopen(MemoryDevice::CrashMode mode);
  // A clean close (the region syncs), then the same reopen.
  void CloseAndReopen();
  // Applied to the region's context at every later open (replication
  // hooks a test watches compactions through).
  void SetHooks(std::function<void(lsm::RegionContext*)> hooks) {
    hooks_ = std::move(hooks);
  }

  lsm::Region* region() const { return region_.get(); }
  alloc::Volume* volume() const { return volume_.get(); }
  MemoryDevice* device() const { return device_.get(); }

  // The value of `key`, or the status's text when there is none.
  std::string GetOrStatus(std::string_view key) const;

 private:
  void MakeContext();
  void Release();
  void Open();

  const lsm::RegionOptions options_;
  std::shared_ptr<MemoryDevice> device_;
  std::unique_ptr<alloc::Volume> volume_;
  std::unique_ptr<io::SyncGroup> sync_group_;
  std::unique_ptr<lsm::NodeCache> nodes_;
  std::unique_ptr<lsm::RecordReader> records_;
  ThreadPool pool_{2};
  lsm::RegionContext context_;
  std::function<void(lsm::RegionContext*)> hooks_;
  std::unique_ptr<lsm::Region> region_;
  Status status_;
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_REGION_HARNESS_H_
