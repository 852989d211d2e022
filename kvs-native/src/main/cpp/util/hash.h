// Hash64: a fast 64-bit non-cryptographic hash of a byte string.
//
// Used where the engine needs well-spread bits from a key, first of all the
// per-level Bloom filters, whose on-device format depends on the exact values:
// changing this function is a format change (hash_test.cc pins golden values
// so that it cannot happen unnoticed).
//
// Design: the length and the seed set the initial state; the input is then
// consumed 8 bytes at a time, each word xored into the state, which is
// multiplied by an odd constant and folded with an xorshift (both steps are
// invertible, so for a given prefix no two words lead to the same state). The
// last 1-7 bytes are gathered into one word with reads that stay inside the
// input. A final multiply/xorshift finalizer gives full avalanche: each input
// bit flips each output bit with probability close to 1/2.
//
// Not for untrusted adversarial input: anyone who knows the seed can build
// colliding keys. That is acceptable for a Bloom filter, whose worst case is a
// wasted read.
//
// Thread safety: pure function, reads only data[0..size).

#ifndef KVS_UTIL_HASH_H_
#define KVS_UTIL_HASH_H_

#include <cstddef>
#include <cstdint>

namespace kvs {

// The hash of data[0..size) under `seed`. `data` may be null when size is 0.
// Different seeds give independent-looking hash functions. The result does
// not depend on the alignment of `data`; words are read little-endian
// (util/coding.h), so like every engine format it assumes a little-endian
// host.
uint64_t Hash64(const void* data, size_t size, uint64_t seed = 0);

}  // namespace kvs

#endif  // KVS_UTIL_HASH_H_
