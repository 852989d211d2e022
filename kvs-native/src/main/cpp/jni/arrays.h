// Native bytes to Java byte arrays, shared by the JNI tables.

#ifndef KVS_JNI_ARRAYS_H_
#define KVS_JNI_ARRAYS_H_

#include <jni.h>

#include <cstddef>

namespace kvs::jni {

// A new byte[] holding `size` bytes at `data`, or null with an
// OutOfMemoryError pending.
inline jbyteArray NewByteArrayOf(JNIEnv* env, const void* data, size_t size) {
  jbyteArray result = env->NewByteArray(static_cast<jsize>(size));
  if (result != nullptr) {
    env->SetByteArrayRegion(result, 0, static_cast<jsize>(size),
                            static_cast<const jbyte*>(data));
  }
  return result;
}

// A kvs_value_sink context that turns the value into a byte[].
struct ArraySink {
  JNIEnv* env;
  jbyteArray result;
};

inline void SinkToArray(void* context, const void* value, size_t size) {
  auto* sink = static_cast<ArraySink*>(context);
  sink->result = NewByteArrayOf(sink->env, value, size);
}

}  // namespace kvs::jni

#endif  // KVS_JNI_ARRAYS_H_
