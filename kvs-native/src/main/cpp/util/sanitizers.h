// Whether this translation unit is compiled with AddressSanitizer, for gcc
// (__SANITIZE_ADDRESS__) and clang (__has_feature; clang before 16 does not
// define gcc's macro).

#ifndef KVS_UTIL_SANITIZERS_H_
#define KVS_UTIL_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__)
#define KVS_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVS_ADDRESS_SANITIZER 1
#endif
#endif

#endif  // KVS_UTIL_SANITIZERS_H_
