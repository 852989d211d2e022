// The C ABI of libkvs: the one door into the native data plane.
//
// Everything outside kvs-native/src/main/cpp (the JNI layer, native tools,
// fuzzers, benchmarks) calls the library through this header only. It is
// plain C so that any language can bind it and so that no C++ exception or
// type crosses the boundary.
//
// Error convention: functions that can fail return a kvs_status (none of the
// functions below can fail yet).
//
// Thread safety: every function here may be called from any thread at once.

#ifndef KVS_KVS_H_
#define KVS_KVS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVS_EXPORT __attribute__((visibility("default")))

// Bumped whenever a function's signature or a constant's meaning changes.
#define KVS_ABI_VERSION 1

// Status codes. The values are stable: the Java enum io.kvs.core.StatusCode
// and the wire protocol use the same numbers.
typedef enum kvs_status {
  KVS_OK = 0,
  KVS_NOT_FOUND = 1,         // key, region or file does not exist
  KVS_CORRUPTION = 2,        // checksum or format check failed; never served
  KVS_IO_ERROR = 3,          // the OS reported an I/O error (incl. full disk)
  KVS_INVALID_ARGUMENT = 4,  // argument outside documented bounds
  KVS_BUSY = 5,              // temporarily unable; retry later
  KVS_CLOSED = 6,            // handle already closed
  KVS_TOO_LARGE = 7,         // key or value above the documented limit
  KVS_INTERNAL = 8,          // broken invariant inside the library
} kvs_status;

// The library version, e.g. "0.1.0-SNAPSHOT". Static storage; never NULL.
KVS_EXPORT const char* kvs_version(void);

// KVS_ABI_VERSION as compiled into the library.
KVS_EXPORT uint32_t kvs_abi_version(void);

// One line describing the build: compiler, build type, sanitizers, CPU
// features in use. Static storage; never NULL.
KVS_EXPORT const char* kvs_build_info(void);

// The constant's name without prefix, e.g. "CORRUPTION"; "UNKNOWN" for a
// value this version does not define.
KVS_EXPORT const char* kvs_status_name(kvs_status status);

// CRC32C (Castagnoli, reflected polynomial 0x82F63B78, as in iSCSI and
// ext4): extends `crc`, the checksum of some preceding bytes (0 for none),
// with `size` bytes at `data`. kvs_crc32c_extend(0, d, n) is the checksum
// of d[0..n). `data` may be NULL only when `size` is 0.
KVS_EXPORT uint32_t kvs_crc32c_extend(uint32_t crc, const void* data,
                                      size_t size);

// 1 when kvs_crc32c_extend uses the CPU's CRC32C instruction, else 0.
KVS_EXPORT int kvs_crc32c_is_hardware_accelerated(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KVS_KVS_H_
