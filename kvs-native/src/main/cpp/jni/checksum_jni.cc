// Natives for CRC32C over Java byte arrays and direct buffers.

#include <jni.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "jni/exceptions.h"
#include "jni/registration.h"
#include "kvs/kvs.h"

namespace kvs::jni {
namespace {

// A critical section pins the array and may hold up the garbage collector,
// so large arrays are checksummed in slices of this size (about 25 us each
// with the CRC32C instruction).
constexpr jint kCriticalSliceBytes = 256 * 1024;

bool RangeIsValid(jlong capacity, jint offset, jint length) {
  return offset >= 0 && length >= 0 &&
         static_cast<jlong>(offset) + length <= capacity;
}

jint ExtendArray(JNIEnv* env, jclass, jint crc, jbyteArray array, jint offset,
                 jint length) {
  if (array == nullptr ||
      !RangeIsValid(env->GetArrayLength(array), offset, length)) {
    ThrowStatus(env, Status::InvalidArgument(
                         "crc32c: array range out of bounds or array null"));
    return 0;
  }
  auto state = static_cast<uint32_t>(crc);
  while (length > 0) {
    const jint slice = std::min(length, kCriticalSliceBytes);
    void* base = env->GetPrimitiveArrayCritical(array, nullptr);
    if (base == nullptr) {
      return 0;  // OutOfMemoryError is pending
    }
    state = kvs_crc32c_extend(state, static_cast<uint8_t*>(base) + offset,
                              static_cast<size_t>(slice));
    env->ReleasePrimitiveArrayCritical(array, base, JNI_ABORT);
    offset += slice;
    length -= slice;
  }
  return static_cast<jint>(state);
}

jint ExtendDirect(JNIEnv* env, jclass, jint crc, jobject buffer, jint offset,
                  jint length) {
  void* address = buffer ? env->GetDirectBufferAddress(buffer) : nullptr;
  if (address == nullptr) {
    ThrowStatus(env, Status::InvalidArgument(
                         "crc32c: buffer is null or not a direct buffer"));
    return 0;
  }
  if (!RangeIsValid(env->GetDirectBufferCapacity(buffer), offset, length)) {
    ThrowStatus(env,
                Status::InvalidArgument("crc32c: buffer range out of bounds"));
    return 0;
  }
  return static_cast<jint>(kvs_crc32c_extend(
      static_cast<uint32_t>(crc), static_cast<uint8_t*>(address) + offset,
      static_cast<size_t>(length)));
}

jboolean IsHardwareAccelerated(JNIEnv*, jclass) {
  return kvs_crc32c_is_hardware_accelerated() ? JNI_TRUE : JNI_FALSE;
}

}  // namespace

bool RegisterChecksumNatives(JNIEnv* env, jclass native_methods_class) {
  static const JNINativeMethod kMethods[] = {
      {const_cast<char*>("crc32cExtendArray"), const_cast<char*>("(I[BII)I"),
       reinterpret_cast<void*>(&ExtendArray)},
      {const_cast<char*>("crc32cExtendDirect"),
       const_cast<char*>("(ILjava/nio/ByteBuffer;II)I"),
       reinterpret_cast<void*>(&ExtendDirect)},
      {const_cast<char*>("crc32cIsHardwareAccelerated"),
       const_cast<char*>("()Z"),
       reinterpret_cast<void*>(&IsHardwareAccelerated)},
  };
  return env->RegisterNatives(native_methods_class, kMethods,
                              static_cast<jint>(std::size(kMethods))) == 0;
}

}  // namespace kvs::jni
