// Test helper for fuzz targets whose reader takes a whole device (redo log
// replay, log replay): turns one fuzz input into the contents of a few 2 MiB
// segments of a MemoryDevice, cheaply enough to do it thousands of times a
// second.
//
// A device image is a few stripes, each a run of bytes placed at a block of
// one segment; every other byte of the device is zero. Encoded as a fuzz
// input (little-endian):
//
// | offset    | size    | field                                           |
// |-----------|---------|-------------------------------------------------|
// | 0         | p       | parameters: the target's own, p fixed per target |
// | p         | 4 * n   | per stripe: fixed16 start block (taken modulo    |
// |           |         | the blocks of a segment), fixed16 length in bytes |
// | p + 4n    | rest    | the stripes' bytes, in stripe order              |
//
// Stripe i goes to segment i (a target maps segments as it likes). Lengths
// running past the input are cut to what is left; a stripe that would run
// past its segment's end is cut there. An input shorter than p + 4n is not
// a device image. Keeping lengths in the header rather than cutting at
// separators lets the fuzzer grow one stripe without shifting the others'
// meaning.

#ifndef KVS_TESTING_FUZZ_DEVICE_H_
#define KVS_TESTING_FUZZ_DEVICE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/file.h"
#include "testing/memory_device.h"

namespace kvs::testing {

struct Stripe {
  uint64_t start_block = 0;  // in its segment
  std::string_view bytes;    // refers into the fuzz input
};

// Splits `input` as drawn above. Returns false if it is too short.
bool SplitDeviceImage(std::string_view input, size_t params_bytes,
                      size_t stripe_count, std::string_view* params,
                      std::vector<Stripe>* stripes);

// The inverse, for writing seed inputs. Requires every stripe to fit in a
// fixed16 length and start block.
std::string JoinDeviceImage(std::string_view params,
                            const std::vector<Stripe>& stripes);

// A MemoryDevice reused from one fuzz input to the next: Load writes an
// input's stripes, Reset zeroes every byte written since the last Reset, so
// an input costs what it writes rather than the device's size. Handles from
// Open record their writes too (a writer appending after replay), and Reset
// undoes them.
//
// Not thread-safe. Handles must not outlive the FuzzDevice.
class FuzzDevice {
 public:
  explicit FuzzDevice(uint64_t segment_count);

  // Writes stripe i at its block of segment `first_segment + i` and syncs.
  // Stripes for segments beyond the device are dropped.
  void Load(uint64_t first_segment, const std::vector<Stripe>& stripes);
  // A new handle on the device; its writes are undone by Reset.
  std::unique_ptr<io::File> Open();
  // Zeroes (durably) every byte written since the last Reset.
  void Reset();

  uint64_t segment_count() const { return segment_count_; }
  MemoryDevice* device() { return device_.get(); }

 private:
  void Record(uint64_t offset, size_t size);

  const uint64_t segment_count_;
  std::shared_ptr<MemoryDevice> device_;
  std::unique_ptr<io::File> raw_;  // unrecorded: for Load and Reset
  std::vector<std::pair<uint64_t, size_t>> written_;  // offset, size
  friend class RecordingFile;
};

}  // namespace kvs::testing

#endif  // KVS_TESTING_FUZZ_DEVICE_H_
