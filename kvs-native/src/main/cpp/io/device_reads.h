// Device reads refused on threads that must not wait for the device.
//
// A shard thread runs requests to completion (docs/ARCHITECTURE.md "Server
// threads"); a read that misses the caches would block it in a direct-I/O
// pread for as long as the device takes -- on a busy disk 100-500 ms, during
// which every other connection of the shard waits (the tail profile of
// issue 26: 3.7 s of 5 s a shard spent blocked). So a shard runs a read
// inside a DeviceReadsRefused scope: a file read that would go to the
// device fails at once with Busy instead, the scope remembers it, and the
// caller runs the request again on a thread that may wait
// (service/region_service.h, the deferred pool). What the first attempt found
// in memory (caches, L0) costs nothing twice: it is found again.
//
// Thread safety: per thread; scopes nest.

#ifndef KVS_IO_DEVICE_READS_H_
#define KVS_IO_DEVICE_READS_H_

namespace kvs::io {

namespace device_reads_internal {
inline thread_local int refusing = 0;
inline thread_local bool refused = false;
}  // namespace device_reads_internal

class DeviceReadsRefused {
 public:
  DeviceReadsRefused() {
    if (device_reads_internal::refusing++ == 0) {
      device_reads_internal::refused = false;
    }
  }
  ~DeviceReadsRefused() { --device_reads_internal::refusing; }
  DeviceReadsRefused(const DeviceReadsRefused&) = delete;
  DeviceReadsRefused& operator=(const DeviceReadsRefused&) = delete;

  // Whether a read was refused since the outermost scope opened.
  bool refused() const { return device_reads_internal::refused; }
};

// Called by a file before it reads the device: true (and remembered) if
// this thread refuses device reads now; the read then fails with Busy.
inline bool RefuseDeviceRead() {
  if (device_reads_internal::refusing == 0) return false;
  device_reads_internal::refused = true;
  return true;
}

}  // namespace kvs::io

#endif  // KVS_IO_DEVICE_READS_H_
