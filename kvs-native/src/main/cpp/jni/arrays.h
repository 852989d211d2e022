// Native bytes to Java byte arrays, shared by the JNI tables.

#ifndef KVS_JNI_ARRAYS_H_
#define KVS_JNI_ARRAYS_H_

#include <jni.h>

#include <cstddef>
#include <iterator>

#include "kvs/kvs.h"

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

// A new long[] of a contents digest's fields, in kvs_contents_digest's
// order (io.kvs.engine.ContentsDigest reads them), or null with an
// OutOfMemoryError pending.
inline jlongArray NewDigestArray(JNIEnv* env,
                                 const kvs_contents_digest& digest) {
  const jlong values[] = {static_cast<jlong>(digest.digest),
                          static_cast<jlong>(digest.pairs),
                          static_cast<jlong>(digest.level_pairs),
                          static_cast<jlong>(digest.levels),
                          static_cast<jlong>(digest.past_levels),
                          static_cast<jlong>(digest.dropped),
                          static_cast<jlong>(digest.last_lsn),
                          static_cast<jlong>(digest.compacted_lsn)};
  constexpr jsize kFields = static_cast<jsize>(std::size(values));
  jlongArray result = env->NewLongArray(kFields);
  if (result != nullptr) env->SetLongArrayRegion(result, 0, kFields, values);
  return result;
}

}  // namespace kvs::jni

#endif  // KVS_JNI_ARRAYS_H_
