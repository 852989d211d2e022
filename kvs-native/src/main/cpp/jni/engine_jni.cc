// Natives of io.kvs.engine: engine and region handles, put/get/delete over
// byte arrays and direct buffers. Handles are the C ABI's pointers as jlong;
// the Java wrappers guarantee a handle is live for the duration of a call.

#include <jni.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "jni/arrays.h"
#include "jni/exceptions.h"
#include "jni/registration.h"
#include "kvs/kvs.h"
#include "util/coding.h"

namespace kvs::jni {
namespace {

kvs_engine* EngineOf(jlong handle) {
  return reinterpret_cast<kvs_engine*>(handle);
}
kvs_region* RegionOf(jlong handle) {
  return reinterpret_cast<kvs_region*>(handle);
}

// Copies a byte[] range into `out`. The wrappers check bounds first.
bool CopyArray(JNIEnv* env, jbyteArray array, jint offset, jint length,
               std::string* out) {
  out->resize(static_cast<size_t>(length));
  env->GetByteArrayRegion(array, offset, length,
                          reinterpret_cast<jbyte*>(out->data()));
  return !env->ExceptionCheck();
}

// The address of a direct buffer range, or null with an exception pending.
const char* DirectRange(JNIEnv* env, jobject buffer, jint position,
                        jint length) {
  auto* base = static_cast<const char*>(
      buffer ? env->GetDirectBufferAddress(buffer) : nullptr);
  if (base == nullptr) {
    ThrowStatus(env, Status::InvalidArgument("not a direct buffer"));
    return nullptr;
  }
  if (position < 0 || length < 0 ||
      static_cast<jlong>(position) + length >
          env->GetDirectBufferCapacity(buffer)) {
    ThrowStatus(env, Status::InvalidArgument("buffer range out of bounds"));
    return nullptr;
  }
  return base + position;
}

jlong EngineOpen(JNIEnv* env, jclass, jstring path, jboolean sync,
                 jint flush_interval_ms, jboolean direct_io,
                 jlong l0_size_bytes, jint growth_factor,
                 jint small_kv_bytes_max, jint medium_kv_bytes_max,
                 jlong memory_budget_bytes, jboolean create_if_missing) {
  const char* chars = env->GetStringUTFChars(path, nullptr);
  if (chars == nullptr) {
    return 0;
  }
  const std::string path_string(chars);
  env->ReleaseStringUTFChars(path, chars);
  kvs_engine_options options;
  kvs_engine_options_init(&options);
  options.sync = sync ? 1 : 0;
  options.flush_interval_ms = static_cast<uint32_t>(flush_interval_ms);
  options.direct_io = direct_io ? 1 : 0;
  options.l0_size_bytes = static_cast<uint64_t>(l0_size_bytes);
  options.growth_factor = static_cast<uint32_t>(growth_factor);
  options.small_kv_bytes_max = static_cast<uint32_t>(small_kv_bytes_max);
  options.medium_kv_bytes_max = static_cast<uint32_t>(medium_kv_bytes_max);
  options.memory_budget_bytes = static_cast<uint64_t>(memory_budget_bytes);
  kvs_engine* engine = nullptr;
  if (Failed(env, kvs_engine_open(path_string.c_str(), &options,
                                  create_if_missing ? 1 : 0, &engine))) {
    return 0;
  }
  return reinterpret_cast<jlong>(engine);
}

void EngineClose(JNIEnv*, jclass, jlong engine) {
  kvs_engine_close(EngineOf(engine));
}

// The counters in kvs_engine_stats order.
jlongArray EngineStats(JNIEnv* env, jclass, jlong engine) {
  kvs_engine_stats stats{};
  kvs_engine_get_stats(EngineOf(engine), &stats);
  const jlong values[] = {static_cast<jlong>(stats.cache_hits),
                          static_cast<jlong>(stats.cache_misses),
                          static_cast<jlong>(stats.cache_bytes),
                          static_cast<jlong>(stats.cache_capacity_bytes),
                          static_cast<jlong>(stats.l0_bytes),
                          static_cast<jlong>(stats.l0_budget_bytes)};
  const jsize count = static_cast<jsize>(std::size(values));
  jlongArray result = env->NewLongArray(count);
  if (result != nullptr) env->SetLongArrayRegion(result, 0, count, values);
  return result;
}

jlong RegionCall(JNIEnv* env, jlong engine, jbyteArray name, bool create) {
  std::string bytes;
  if (!CopyArray(env, name, 0, env->GetArrayLength(name), &bytes)) {
    return 0;
  }
  kvs_region* region = nullptr;
  const kvs_status status =
      create ? kvs_region_create(EngineOf(engine), bytes.data(), bytes.size(),
                                 &region)
             : kvs_region_open(EngineOf(engine), bytes.data(), bytes.size(),
                               &region);
  return Failed(env, status) ? 0 : reinterpret_cast<jlong>(region);
}

jlong RegionCreate(JNIEnv* env, jclass, jlong engine, jbyteArray name) {
  return RegionCall(env, engine, name, /*create=*/true);
}

jlong RegionOpen(JNIEnv* env, jclass, jlong engine, jbyteArray name) {
  return RegionCall(env, engine, name, /*create=*/false);
}

void RegionDrop(JNIEnv* env, jclass, jlong engine, jbyteArray name) {
  std::string bytes;
  if (CopyArray(env, name, 0, env->GetArrayLength(name), &bytes)) {
    Failed(env, kvs_region_drop(EngineOf(engine), bytes.data(), bytes.size()));
  }
}

void RegionSplit(JNIEnv* env, jclass, jlong engine, jbyteArray name,
                 jbyteArray split_key, jbyteArray lower, jbyteArray upper) {
  std::string name_bytes, key_bytes, lower_bytes, upper_bytes;
  if (CopyArray(env, name, 0, env->GetArrayLength(name), &name_bytes) &&
      CopyArray(env, split_key, 0, env->GetArrayLength(split_key),
                &key_bytes) &&
      CopyArray(env, lower, 0, env->GetArrayLength(lower), &lower_bytes) &&
      CopyArray(env, upper, 0, env->GetArrayLength(upper), &upper_bytes)) {
    Failed(env, kvs_region_split(EngineOf(engine), name_bytes.data(),
                                 name_bytes.size(), key_bytes.data(),
                                 key_bytes.size(), lower_bytes.data(),
                                 lower_bytes.size(), upper_bytes.data(),
                                 upper_bytes.size()));
  }
}

void Put(JNIEnv* env, jclass, jlong region, jbyteArray key, jint key_offset,
         jint key_length, jbyteArray value, jint value_offset,
         jint value_length) {
  std::string key_bytes, value_bytes;
  if (CopyArray(env, key, key_offset, key_length, &key_bytes) &&
      CopyArray(env, value, value_offset, value_length, &value_bytes)) {
    Failed(env, kvs_put(RegionOf(region), key_bytes.data(), key_bytes.size(),
                        value_bytes.data(), value_bytes.size()));
  }
}

void PutDirect(JNIEnv* env, jclass, jlong region, jobject key,
               jint key_position, jint key_length, jobject value,
               jint value_position, jint value_length) {
  const char* key_bytes = DirectRange(env, key, key_position, key_length);
  const char* value_bytes =
      key_bytes ? DirectRange(env, value, value_position, value_length)
                : nullptr;
  if (value_bytes != nullptr) {
    Failed(env,
           kvs_put(RegionOf(region), key_bytes, static_cast<size_t>(key_length),
                   value_bytes, static_cast<size_t>(value_length)));
  }
}

void Delete(JNIEnv* env, jclass, jlong region, jbyteArray key, jint offset,
            jint length) {
  std::string key_bytes;
  if (CopyArray(env, key, offset, length, &key_bytes)) {
    Failed(env,
           kvs_delete(RegionOf(region), key_bytes.data(), key_bytes.size()));
  }
}

jbyteArray Get(JNIEnv* env, jclass, jlong region, jbyteArray key, jint offset,
               jint length) {
  std::string key_bytes;
  if (!CopyArray(env, key, offset, length, &key_bytes)) {
    return nullptr;
  }
  ArraySink sink{env, nullptr};
  const kvs_status status = kvs_get(RegionOf(region), key_bytes.data(),
                                    key_bytes.size(), &SinkToArray, &sink);
  if (status == KVS_NOT_FOUND) {
    return nullptr;
  }
  Failed(env, status);
  return sink.result;
}

// Merges the region's writes into its levels, waiting at most `wait_ms`;
// whether every write before the call was merged (kvs_region_merge_ahead).
jboolean RegionMergeAhead(JNIEnv* env, jclass, jlong region, jlong wait_ms) {
  int merged = 0;
  Failed(env, kvs_region_merge_ahead(RegionOf(region),
                                     static_cast<uint64_t>(wait_ms), &merged));
  return merged != 0 ? JNI_TRUE : JNI_FALSE;
}

// A key `find` (kvs_region_split_key, kvs_region_load_split_key) gives the
// region, or null when it says KVS_NOT_FOUND.
jbyteArray KeyOrNull(JNIEnv* env, jlong region,
                     kvs_status (*find)(kvs_region*, kvs_value_sink, void*)) {
  ArraySink sink{env, nullptr};
  const kvs_status status = find(RegionOf(region), &SinkToArray, &sink);
  if (status == KVS_NOT_FOUND) {
    return nullptr;
  }
  Failed(env, status);
  return sink.result;
}

// The key the region splits at by size, from its index; null if it cannot
// say.
jbyteArray RegionSplitKey(JNIEnv* env, jclass, jlong region) {
  return KeyOrNull(env, region, &kvs_region_split_key);
}

// The key the region splits at by load; null with too few requests sampled.
jbyteArray RegionLoadSplitKey(JNIEnv* env, jclass, jlong region) {
  return KeyOrNull(env, region, &kvs_region_load_split_key);
}

struct BufferSink {
  char* target;
  size_t capacity;
  size_t size;
};

void SinkToBuffer(void* context, const void* value, size_t size) {
  auto* sink = static_cast<BufferSink*>(context);
  sink->size = size;
  if (size <= sink->capacity && size > 0) {
    std::memcpy(sink->target, value, size);
  }
}

// Returns the value's size (copied only if it fits), or -1 if absent.
jint GetDirect(JNIEnv* env, jclass, jlong region, jobject key,
               jint key_position, jint key_length, jobject value,
               jint value_position, jint value_capacity) {
  const char* key_bytes = DirectRange(env, key, key_position, key_length);
  const char* target =
      key_bytes ? DirectRange(env, value, value_position, value_capacity)
                : nullptr;
  if (target == nullptr) {
    return -1;
  }
  BufferSink sink{const_cast<char*>(target),
                  static_cast<size_t>(value_capacity), 0};
  const kvs_status status =
      kvs_get(RegionOf(region), key_bytes, static_cast<size_t>(key_length),
              &SinkToBuffer, &sink);
  if (status == KVS_NOT_FOUND) {
    return -1;
  }
  if (Failed(env, status)) {
    return -1;
  }
  return static_cast<jint>(sink.size);
}

void RegionSync(JNIEnv* env, jclass, jlong region) {
  Failed(env, kvs_region_sync(RegionOf(region)));
}

// What the region serves, as a digest (kvs_region_contents_digest).
jlongArray RegionContentsDigest(JNIEnv* env, jclass, jlong region) {
  kvs_contents_digest digest;
  if (Failed(env, kvs_region_contents_digest(RegionOf(region), &digest))) {
    return nullptr;
  }
  return NewDigestArray(env, digest);
}

// Why the region stopped; null while it works.
jstring RegionStoppedBy(JNIEnv* env, jclass, jlong region) {
  char message[1024];
  const size_t length =
      kvs_region_stopped_by(RegionOf(region), message, sizeof(message) - 1);
  if (length == 0) return nullptr;
  message[std::min(length, sizeof(message) - 1)] = '\0';
  return env->NewStringUTF(message);
}

void RegionStats(JNIEnv* env, jclass, jlong region, jlongArray out) {
  kvs_region_stats stats;
  kvs_region_get_stats(RegionOf(region), &stats);
  // The order of RegionStats.of on the Java side.
  std::vector<uint64_t> fields = {stats.puts,
                                  stats.deletes,
                                  stats.gets,
                                  stats.l0_bytes,
                                  stats.l0_entries,
                                  stats.stalls,
                                  stats.stall_micros,
                                  stats.small_log_bytes,
                                  stats.large_log_bytes,
                                  stats.last_lsn,
                                  stats.compactions,
                                  stats.compaction_bytes_written,
                                  stats.level_count,
                                  stats.level_kv_bytes,
                                  stats.large_garbage_bytes,
                                  stats.gc_relocated_bytes,
                                  stats.gc_freed_segments,
                                  stats.large_log_segments,
                                  stats.compaction_bytes_read,
                                  stats.medium_log_bytes,
                                  stats.value_bytes_read,
                                  stats.gc_bytes_read};
  fields.insert(fields.end(), std::begin(stats.level_bytes_read),
                std::end(stats.level_bytes_read));
  fields.insert(fields.end(), std::begin(stats.level_bytes_written),
                std::end(stats.level_bytes_written));
  fields.insert(
      fields.end(),
      {stats.recovery_replayed_writes, stats.recovery_dropped_writes,
       stats.recovery_cut_lsn, stats.recovery_micros, stats.compaction_micros,
       stats.shared_segments, stats.l0_kv_bytes});
  std::vector<jlong> values(fields.begin(), fields.end());
  if (env->GetArrayLength(out) < static_cast<jsize>(values.size())) {
    ThrowStatus(env, Status::InvalidArgument("stats array too short"));
    return;
  }
  env->SetLongArrayRegion(out, 0, static_cast<jsize>(values.size()),
                          values.data());
}

kvs_iterator* IteratorOf(jlong handle) {
  return reinterpret_cast<kvs_iterator*>(handle);
}

jlong IteratorCreate(JNIEnv* env, jclass, jlong region,
                     jbyteArray upper_bound) {
  std::string bound;
  if (upper_bound != nullptr &&
      !CopyArray(env, upper_bound, 0, env->GetArrayLength(upper_bound),
                 &bound)) {
    return 0;
  }
  kvs_iterator* iterator = nullptr;
  if (Failed(env, kvs_iterator_create(
                      RegionOf(region),
                      upper_bound != nullptr ? bound.data() : nullptr,
                      bound.size(), &iterator))) {
    return 0;
  }
  return reinterpret_cast<jlong>(iterator);
}

void IteratorDestroy(JNIEnv*, jclass, jlong iterator) {
  kvs_iterator_destroy(IteratorOf(iterator));
}

// Seeks (null key: to the first key); returns whether positioned.
jboolean IteratorSeek(JNIEnv* env, jclass, jlong iterator, jbyteArray key) {
  if (key == nullptr) {
    kvs_iterator_seek_to_first(IteratorOf(iterator));
  } else {
    std::string bytes;
    if (!CopyArray(env, key, 0, env->GetArrayLength(key), &bytes)) {
      return JNI_FALSE;
    }
    kvs_iterator_seek(IteratorOf(iterator), bytes.data(), bytes.size());
  }
  if (Failed(env, kvs_iterator_status(IteratorOf(iterator)))) {
    return JNI_FALSE;
  }
  return kvs_iterator_valid(IteratorOf(iterator)) ? JNI_TRUE : JNI_FALSE;
}

// Moves on; returns whether positioned.
jboolean IteratorNext(JNIEnv* env, jclass, jlong iterator) {
  kvs_iterator_next(IteratorOf(iterator));
  if (Failed(env, kvs_iterator_status(IteratorOf(iterator)))) {
    return JNI_FALSE;
  }
  return kvs_iterator_valid(IteratorOf(iterator)) ? JNI_TRUE : JNI_FALSE;
}

jbyteArray IteratorKey(JNIEnv* env, jclass, jlong iterator) {
  const void* key = nullptr;
  size_t size = 0;
  kvs_iterator_key(IteratorOf(iterator), &key, &size);
  return NewByteArrayOf(env, key, size);
}

jbyteArray IteratorValue(JNIEnv* env, jclass, jlong iterator) {
  ArraySink sink{env, nullptr};
  if (Failed(env,
             kvs_iterator_value(IteratorOf(iterator), &SinkToArray, &sink))) {
    return nullptr;
  }
  return sink.result;
}

// Packs pairs for IteratorReadPairs: a byte saying whether the iterator is
// still valid, then per pair its key size and value size (4 bytes each,
// little-endian) followed by the key and the value.
struct PairPacker {
  std::string bytes;
};

void PackPair(void* context, const void* key, size_t key_size,
              const void* value, size_t value_size) {
  auto* packer = static_cast<PairPacker*>(context);
  char sizes[8];
  kvs::coding::EncodeFixed32(sizes, static_cast<uint32_t>(key_size));
  kvs::coding::EncodeFixed32(sizes + 4, static_cast<uint32_t>(value_size));
  packer->bytes.append(sizes, sizeof sizes);
  packer->bytes.append(static_cast<const char*>(key), key_size);
  packer->bytes.append(static_cast<const char*>(value), value_size);
}

jbyteArray IteratorReadPairs(JNIEnv* env, jclass, jlong iterator, jint limit,
                             jint max_bytes) {
  PairPacker packer;
  packer.bytes.push_back(0);
  if (Failed(env, kvs_iterator_read_pairs(
                      IteratorOf(iterator), static_cast<size_t>(limit),
                      static_cast<size_t>(max_bytes), &PackPair, &packer))) {
    return nullptr;
  }
  if (packer.bytes.size() > static_cast<size_t>(INT32_MAX)) {
    ThrowStatus(env, Status::TooLarge("scan batch exceeds a Java array"));
    return nullptr;
  }
  packer.bytes[0] = kvs_iterator_valid(IteratorOf(iterator)) ? 1 : 0;
  return NewByteArrayOf(env, packer.bytes.data(), packer.bytes.size());
}

}  // namespace

bool RegisterEngineNatives(JNIEnv* env, jclass native_methods_class) {
  static const JNINativeMethod kMethods[] = {
      KVS_NATIVE("engineOpen", "(Ljava/lang/String;ZIZJIIIJZ)J", EngineOpen),
      KVS_NATIVE("engineClose", "(J)V", EngineClose),
      KVS_NATIVE("engineStats", "(J)[J", EngineStats),
      KVS_NATIVE("regionCreate", "(J[B)J", RegionCreate),
      KVS_NATIVE("regionOpen", "(J[B)J", RegionOpen),
      KVS_NATIVE("regionDrop", "(J[B)V", RegionDrop),
      KVS_NATIVE("regionSplit", "(J[B[B[B[B)V", RegionSplit),
      KVS_NATIVE("put", "(J[BII[BII)V", Put),
      KVS_NATIVE("putDirect",
                 "(JLjava/nio/ByteBuffer;IILjava/nio/ByteBuffer;II)V",
                 PutDirect),
      KVS_NATIVE("delete", "(J[BII)V", Delete),
      KVS_NATIVE("get", "(J[BII)[B", Get),
      KVS_NATIVE("getDirect",
                 "(JLjava/nio/ByteBuffer;IILjava/nio/ByteBuffer;II)I",
                 GetDirect),
      KVS_NATIVE("regionSync", "(J)V", RegionSync),
      KVS_NATIVE("regionSplitKey", "(J)[B", RegionSplitKey),
      KVS_NATIVE("regionLoadSplitKey", "(J)[B", RegionLoadSplitKey),
      KVS_NATIVE("regionMergeAhead", "(JJ)Z", RegionMergeAhead),
      KVS_NATIVE("regionStats", "(J[J)V", RegionStats),
      KVS_NATIVE("regionStoppedBy", "(J)Ljava/lang/String;", RegionStoppedBy),
      KVS_NATIVE("regionContentsDigest", "(J)[J", RegionContentsDigest),
      KVS_NATIVE("iteratorCreate", "(J[B)J", IteratorCreate),
      KVS_NATIVE("iteratorDestroy", "(J)V", IteratorDestroy),
      KVS_NATIVE("iteratorSeek", "(J[B)Z", IteratorSeek),
      KVS_NATIVE("iteratorNext", "(J)Z", IteratorNext),
      KVS_NATIVE("iteratorKey", "(J)[B", IteratorKey),
      KVS_NATIVE("iteratorValue", "(J)[B", IteratorValue),
      KVS_NATIVE("iteratorReadPairs", "(JII)[B", IteratorReadPairs),
  };
  return env->RegisterNatives(native_methods_class, kMethods,
                              static_cast<jint>(std::size(kMethods))) == 0;
}

}  // namespace kvs::jni
