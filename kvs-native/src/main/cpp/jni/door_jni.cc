// Natives of io.kvs.service.ClientDoor: the native client port. Handles are
// the C ABI's pointers as jlong; the Java wrapper guarantees a handle is
// live.

#include <jni.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "jni/exceptions.h"
#include "jni/registration.h"
#include "kvs/kvs.h"

namespace kvs::jni {
namespace {

// `text` (may be null: empty) into *out; false if an OutOfMemoryError is
// pending.
bool CopyString(JNIEnv* env, jstring text, std::string* out) {
  out->clear();
  if (text == nullptr) return true;
  const char* chars = env->GetStringUTFChars(text, nullptr);
  if (chars == nullptr) return false;
  *out = chars;
  env->ReleaseStringUTFChars(text, chars);
  return true;
}

// `client_secret`: what clients prove (null: none). `tls_certificate`:
// null for plain TCP; else the PEM paths of the certificate chain, its key
// and the trusted CA, and whether client certificates are required.
jlong DoorStart(JNIEnv* env, jclass, jlong service, jstring host, jint port,
                jint shards, jint max_connections, jint max_in_flight,
                jint max_frame_bytes, jbyteArray client_secret,
                jint handshake_timeout_ms, jstring tls_certificate,
                jstring tls_private_key, jstring tls_trusted_ca,
                jboolean tls_require_client_auth) {
  std::string host_name, certificate, private_key, trusted_ca;
  if (!CopyString(env, host, &host_name) ||
      !CopyString(env, tls_certificate, &certificate) ||
      !CopyString(env, tls_private_key, &private_key) ||
      !CopyString(env, tls_trusted_ca, &trusted_ca)) {
    return 0;  // OutOfMemoryError pending
  }
  std::string secret;
  if (client_secret != nullptr) {
    secret.resize(static_cast<size_t>(env->GetArrayLength(client_secret)));
    env->GetByteArrayRegion(client_secret, 0, static_cast<jsize>(secret.size()),
                            reinterpret_cast<jbyte*>(secret.data()));
  }
  kvs_client_door_options options{};
  options.host = host_name.c_str();
  options.port = static_cast<uint16_t>(port);
  options.shards = static_cast<uint32_t>(shards);
  options.max_connections = static_cast<uint32_t>(max_connections);
  options.max_in_flight = static_cast<uint32_t>(max_in_flight);
  options.max_frame_bytes = static_cast<uint32_t>(max_frame_bytes);
  options.client_secret = secret.data();
  options.client_secret_size = secret.size();
  options.handshake_timeout_ms = static_cast<uint32_t>(handshake_timeout_ms);
  options.tls_certificate_path = certificate.c_str();
  options.tls_private_key_path = private_key.c_str();
  options.tls_trusted_ca_path = trusted_ca.c_str();
  options.tls_require_client_auth = tls_require_client_auth ? 1 : 0;
  kvs_client_door* door = nullptr;
  if (Failed(env,
             kvs_client_door_start(
                 &options, reinterpret_cast<kvs_service*>(service), &door))) {
    return 0;
  }
  return reinterpret_cast<jlong>(door);
}

jint DoorPort(JNIEnv*, jclass, jlong door) {
  return kvs_client_door_port(reinterpret_cast<kvs_client_door*>(door));
}

// The door's counters, in kvs_client_door_stats order.
jlongArray DoorStats(JNIEnv* env, jclass, jlong door) {
  kvs_client_door_stats stats{};
  kvs_client_door_stats_get(reinterpret_cast<kvs_client_door*>(door), &stats);
  const jlong values[] = {static_cast<jlong>(stats.requests),
                          static_cast<jlong>(stats.connections),
                          static_cast<jlong>(stats.refused_connections),
                          static_cast<jlong>(stats.refusals),
                          static_cast<jlong>(stats.output_stalls),
                          static_cast<jlong>(stats.malformed),
                          static_cast<jlong>(stats.shard_turns),
                          static_cast<jlong>(stats.shard_wakeups)};
  constexpr jsize kFields = static_cast<jsize>(std::size(values));
  jlongArray result = env->NewLongArray(kFields);
  if (result != nullptr) env->SetLongArrayRegion(result, 0, kFields, values);
  return result;
}

// Whether each shard answered the previous probe (kvs_client_door_probe).
jbooleanArray DoorProbe(JNIEnv* env, jclass, jlong door) {
  std::vector<uint8_t> answered(256);  // kvs_client_door_options.shards <= 256
  const size_t shards =
      kvs_client_door_probe(reinterpret_cast<kvs_client_door*>(door),
                            answered.data(), answered.size());
  const jsize count = static_cast<jsize>(std::min(shards, answered.size()));
  std::vector<jboolean> values(answered.begin(), answered.begin() + count);
  jbooleanArray result = env->NewBooleanArray(count);
  if (result != nullptr) {
    env->SetBooleanArrayRegion(result, 0, count, values.data());
  }
  return result;
}

void DoorStop(JNIEnv*, jclass, jlong door) {
  kvs_client_door_stop(reinterpret_cast<kvs_client_door*>(door));
}

}  // namespace

bool RegisterDoorNatives(JNIEnv* env, jclass native_methods_class) {
  static const JNINativeMethod kMethods[] = {
      KVS_NATIVE("clientDoorStart",
                 "(JLjava/lang/String;IIIII[BILjava/lang/String;"
                 "Ljava/lang/String;Ljava/lang/String;Z)J",
                 DoorStart),
      KVS_NATIVE("clientDoorPort", "(J)I", DoorPort),
      KVS_NATIVE("clientDoorProbe", "(J)[Z", DoorProbe),
      KVS_NATIVE("clientDoorStats", "(J)[J", DoorStats),
      KVS_NATIVE("clientDoorStop", "(J)V", DoorStop),
  };
  return env->RegisterNatives(native_methods_class, kMethods,
                              static_cast<jint>(std::size(kMethods))) == 0;
}

}  // namespace kvs::jni
