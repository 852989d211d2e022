// Natives of io.kvs.fabric: the fabric transport's server (serving engine
// regions) and client. Handles are the C ABI's pointers as jlong; the Java
// wrappers guarantee a handle is live, and that one thread at a time uses a
// client.

#include <jni.h>

#include <algorithm>
#include <cstdint>
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

std::string StringOf(JNIEnv* env, jstring text) {
  if (text == nullptr) return {};
  const char* chars = env->GetStringUTFChars(text, nullptr);
  std::string copy = chars != nullptr ? chars : "";
  if (chars != nullptr) env->ReleaseStringUTFChars(text, chars);
  return copy;
}

std::string StringOfBytes(JNIEnv* env, jbyteArray bytes) {
  if (bytes == nullptr) return {};
  std::string copy(static_cast<size_t>(env->GetArrayLength(bytes)), '\0');
  env->GetByteArrayRegion(bytes, 0, static_cast<jsize>(copy.size()),
                          reinterpret_cast<jbyte*>(copy.data()));
  return copy;
}

jlong ServiceCreate(JNIEnv*, jclass) {
  return reinterpret_cast<jlong>(kvs_service_create());
}

void ServiceAttach(JNIEnv*, jclass, jlong service, jlong region_id, jlong epoch,
                   jlong region) {
  kvs_service_attach(
      reinterpret_cast<kvs_service*>(service), static_cast<uint64_t>(region_id),
      static_cast<uint64_t>(epoch), reinterpret_cast<kvs_region*>(region));
}

// `end` null: unbounded. Backups as parallel arrays of hosts, ports and
// joining flags; `primary_server` the group's primary (null: none given).
void ServiceAttachPlaced(JNIEnv* env, jclass, jlong service, jlong region_id,
                         jlong epoch, jlong region, jboolean primary,
                         jbyteArray start, jbyteArray end,
                         jobjectArray backup_hosts, jintArray backup_ports,
                         jbooleanArray backup_joining, jint mode,
                         jint min_replicas, jstring primary_server,
                         jboolean joining, jbyteArray stream_key,
                         jboolean replicated) {
  const std::string start_bytes = StringOfBytes(env, start);
  const std::string key_bytes = StringOfBytes(env, stream_key);
  const std::string end_bytes = StringOfBytes(env, end);
  const std::string primary_name =
      primary_server != nullptr ? StringOf(env, primary_server) : "";
  std::vector<std::string> hosts;
  std::vector<kvs_backup> backups;
  const jsize count =
      backup_hosts != nullptr ? env->GetArrayLength(backup_hosts) : 0;
  hosts.reserve(static_cast<size_t>(count));
  for (jsize i = 0; i < count; ++i) {
    auto host =
        static_cast<jstring>(env->GetObjectArrayElement(backup_hosts, i));
    hosts.push_back(StringOf(env, host));
    env->DeleteLocalRef(host);
    jint port = 0;
    env->GetIntArrayRegion(backup_ports, i, 1, &port);
    jboolean backup_is_joining = JNI_FALSE;
    if (backup_joining != nullptr) {
      env->GetBooleanArrayRegion(backup_joining, i, 1, &backup_is_joining);
    }
    backups.push_back({nullptr, static_cast<uint16_t>(port),
                       backup_is_joining == JNI_TRUE ? 1 : 0});
  }
  for (size_t i = 0; i < backups.size(); ++i)
    backups[i].host = hosts[i].c_str();
  kvs_placement placement{};
  placement.primary = primary ? 1 : 0;
  placement.start = start_bytes.data();
  placement.start_size = start_bytes.size();
  placement.end = end_bytes.data();
  placement.end_size = end_bytes.size();
  placement.has_end = end != nullptr ? 1 : 0;
  placement.backups = backups.data();
  placement.backup_count = backups.size();
  placement.mode = static_cast<int>(mode);
  placement.min_replicas = static_cast<size_t>(std::max<jint>(1, min_replicas));
  placement.primary_server = primary_name.data();
  placement.primary_server_size = primary_name.size();
  placement.joining = joining ? 1 : 0;
  placement.stream_key = key_bytes.data();
  placement.stream_key_size = key_bytes.size();
  placement.replicated = replicated ? 1 : 0;
  (void)Failed(
      env, kvs_service_attach_placed(
               reinterpret_cast<kvs_service*>(service),
               static_cast<uint64_t>(region_id), static_cast<uint64_t>(epoch),
               reinterpret_cast<kvs_region*>(region), &placement));
}

// A send-index backup's would-serve digest (kvs_service_replica_digest);
// throws for a region not held so.
jlongArray ServiceReplicaDigest(JNIEnv* env, jclass, jlong service,
                                jlong region_id) {
  kvs_contents_digest digest;
  if (Failed(env, kvs_service_replica_digest(
                      reinterpret_cast<kvs_service*>(service),
                      static_cast<uint64_t>(region_id), &digest))) {
    return nullptr;
  }
  return NewDigestArray(env, digest);
}

// {segments adopted, drain, close, adopt, open microseconds}; throws if the
// region holds no replica.
jlongArray ServicePromote(JNIEnv* env, jclass, jlong service, jlong region_id,
                          jbyteArray name, jbyteArray start, jbyteArray end) {
  const std::string bytes = StringOfBytes(env, name);
  const std::string start_bytes = StringOfBytes(env, start);
  const std::string end_bytes = StringOfBytes(env, end);
  kvs_promotion_report report{};
  // An empty end is no end (the region map's convention).
  if (Failed(env, kvs_service_promote(reinterpret_cast<kvs_service*>(service),
                                      static_cast<uint64_t>(region_id),
                                      bytes.data(), bytes.size(),
                                      start_bytes.data(), start_bytes.size(),
                                      end_bytes.data(), end_bytes.size(),
                                      end_bytes.empty() ? 0 : 1, &report))) {
    return nullptr;
  }
  const jlong values[] = {
      static_cast<jlong>(report.segments), static_cast<jlong>(report.drain_us),
      static_cast<jlong>(report.close_us), static_cast<jlong>(report.adopt_us),
      static_cast<jlong>(report.open_us)};
  jlongArray result = env->NewLongArray(5);
  if (result != nullptr) env->SetLongArrayRegion(result, 0, 5, values);
  return result;
}

jint ServiceBackupsCaughtUp(JNIEnv*, jclass, jlong service, jlong region_id) {
  return kvs_service_backups_caught_up(reinterpret_cast<kvs_service*>(service),
                                       static_cast<uint64_t>(region_id));
}

// Each backup's state (1, 0, -1) in placement order.
jbyteArray ServiceBackupStates(JNIEnv* env, jclass, jlong service,
                               jlong region_id) {
  int8_t states[64];
  const size_t count =
      kvs_service_backup_states(reinterpret_cast<kvs_service*>(service),
                                static_cast<uint64_t>(region_id), states, 64);
  const jsize length = static_cast<jsize>(std::min<size_t>(count, 64));
  jbyteArray result = env->NewByteArray(length);
  if (result != nullptr) {
    env->SetByteArrayRegion(result, 0, length,
                            reinterpret_cast<const jbyte*>(states));
  }
  return result;
}

// Three longs per backup: kvs_backup_lag's fields in order.
jlongArray ServiceBackupLags(JNIEnv* env, jclass, jlong service,
                             jlong region_id) {
  constexpr size_t kMax = 64;
  kvs_backup_lag lags[kMax];
  const size_t count = std::min(
      kMax,
      kvs_service_backup_lags(reinterpret_cast<kvs_service*>(service),
                              static_cast<uint64_t>(region_id), lags, kMax));
  jlong values[3 * kMax];
  for (size_t i = 0; i < count; ++i) {
    values[3 * i] = static_cast<jlong>(lags[i].queued_bytes);
    values[3 * i + 1] = static_cast<jlong>(lags[i].writes);
    values[3 * i + 2] = static_cast<jlong>(lags[i].oldest_wait_ns);
  }
  const jsize length = static_cast<jsize>(3 * count);
  jlongArray result = env->NewLongArray(length);
  if (result != nullptr) env->SetLongArrayRegion(result, 0, length, values);
  return result;
}

// Why the stream to backup `index` failed; null if it did not.
jstring ServiceBackupFailure(JNIEnv* env, jclass, jlong service,
                             jlong region_id, jint index) {
  char message[1024];
  const size_t length = kvs_service_backup_failure(
      reinterpret_cast<kvs_service*>(service), static_cast<uint64_t>(region_id),
      static_cast<size_t>(index), message, sizeof(message) - 1);
  if (length == 0) return nullptr;
  message[std::min(length, sizeof(message) - 1)] = '\0';
  return env->NewStringUTF(message);
}

void ServiceRequireLease(JNIEnv*, jclass, jlong service) {
  kvs_service_require_lease(reinterpret_cast<kvs_service*>(service));
}

void ServiceRenewLease(JNIEnv*, jclass, jlong service, jlong valid_for_ns) {
  kvs_service_renew_lease(reinterpret_cast<kvs_service*>(service),
                          static_cast<int64_t>(valid_for_ns));
}

jboolean ServiceProbeReplication(JNIEnv*, jclass, jlong service) {
  return kvs_service_probe_replication(
             reinterpret_cast<kvs_service*>(service)) != 0
             ? JNI_TRUE
             : JNI_FALSE;
}

jboolean ServiceHoldsReplica(JNIEnv* env, jclass, jlong service,
                             jbyteArray name) {
  const std::string bytes = StringOfBytes(env, name);
  return kvs_service_holds_replica(reinterpret_cast<kvs_service*>(service),
                                   bytes.data(), bytes.size()) != 0
             ? JNI_TRUE
             : JNI_FALSE;
}

void ServiceUseEngine(JNIEnv*, jclass, jlong service, jlong engine) {
  kvs_service_use_engine(reinterpret_cast<kvs_service*>(service),
                         reinterpret_cast<kvs_engine*>(engine));
}

// The counters in kvs_replication_stats order.
jlongArray ServiceReplicationStats(JNIEnv* env, jclass, jlong service) {
  kvs_replication_stats stats{};
  kvs_service_replication_stats(reinterpret_cast<kvs_service*>(service),
                                &stats);
  const jlong values[] = {static_cast<jlong>(stats.log_bytes),
                          static_cast<jlong>(stats.index_bytes),
                          static_cast<jlong>(stats.writes),
                          static_cast<jlong>(stats.flushes),
                          static_cast<jlong>(stats.index_messages),
                          static_cast<jlong>(stats.index_cpu_ns),
                          static_cast<jlong>(stats.backup_tail_bytes),
                          static_cast<jlong>(stats.backup_segments),
                          static_cast<jlong>(stats.backup_levels),
                          static_cast<jlong>(stats.backup_log_cpu_ns),
                          static_cast<jlong>(stats.backup_index_cpu_ns),
                          static_cast<jlong>(stats.insert_cpu_ns),
                          static_cast<jlong>(stats.batches),
                          static_cast<jlong>(stats.stream_failures)};
  const jsize count = static_cast<jsize>(std::size(values));
  jlongArray result = env->NewLongArray(count);
  if (result != nullptr) env->SetLongArrayRegion(result, 0, count, values);
  return result;
}

// The request metrics in kvs_service_request_stats order.
jlongArray ServiceRequestStats(JNIEnv* env, jclass, jlong service) {
  constexpr size_t kValues =
      KVS_REQUEST_OPERATIONS *
      (KVS_REQUEST_STATUSES + KVS_REQUEST_LATENCY_BUCKETS + 1);
  uint64_t values[kValues];
  const size_t count = kvs_service_request_stats(
      reinterpret_cast<kvs_service*>(service), values, kValues);
  jlong converted[kValues];
  for (size_t i = 0; i < count; ++i) {
    converted[i] = static_cast<jlong>(values[i]);
  }
  jlongArray result = env->NewLongArray(static_cast<jsize>(count));
  if (result != nullptr) {
    env->SetLongArrayRegion(result, 0, static_cast<jsize>(count), converted);
  }
  return result;
}

void ServiceSetRequestMetrics(JNIEnv*, jclass, jlong service,
                              jboolean enabled) {
  kvs_service_set_request_metrics(reinterpret_cast<kvs_service*>(service),
                                  enabled == JNI_TRUE ? 1 : 0);
}

void ServiceDetach(JNIEnv*, jclass, jlong service, jlong region_id) {
  kvs_service_detach(reinterpret_cast<kvs_service*>(service),
                     static_cast<uint64_t>(region_id));
}

void ServiceDetachFlushed(JNIEnv* env, jclass, jlong service, jlong region_id) {
  Failed(env,
         kvs_service_detach_flushed(reinterpret_cast<kvs_service*>(service),
                                    static_cast<uint64_t>(region_id)));
}

void ServiceDetachSealed(JNIEnv* env, jclass, jlong service, jlong region_id,
                         jint hold_ms) {
  Failed(env, kvs_service_detach_sealed(
                  reinterpret_cast<kvs_service*>(service),
                  static_cast<uint64_t>(region_id),
                  static_cast<uint32_t>(std::max<jint>(0, hold_ms))));
}

void ServiceTakeOver(JNIEnv* env, jclass, jlong service, jlong region_id,
                     jlongArray predecessors) {
  const jsize count = env->GetArrayLength(predecessors);
  std::vector<uint64_t> ids(static_cast<size_t>(count));
  env->GetLongArrayRegion(predecessors, 0, count,
                          reinterpret_cast<jlong*>(ids.data()));
  kvs_service_take_over(reinterpret_cast<kvs_service*>(service),
                        static_cast<uint64_t>(region_id), ids.data(),
                        ids.size());
}

// The start of `request[position, position + length)`, a direct buffer
// range (no copy on the way in); null with an exception thrown if it is not
// one.
const char* DirectRange(JNIEnv* env, jobject request, jint position,
                        jint length) {
  auto* base = static_cast<const char*>(env->GetDirectBufferAddress(request));
  if (base == nullptr || position < 0 || length < 0 ||
      static_cast<jlong>(position) + length >
          env->GetDirectBufferCapacity(request)) {
    ThrowStatus(env, Status::InvalidArgument("not a direct buffer range"));
    return nullptr;
  }
  return base + position;
}

// Reads the request from a direct buffer range.
jbyteArray ServiceHandle(JNIEnv* env, jclass, jlong service, jobject request,
                         jint position, jint length) {
  const char* base = DirectRange(env, request, position, length);
  if (base == nullptr) return nullptr;
  ArraySink sink{env, nullptr};
  kvs_service_handle(reinterpret_cast<kvs_service*>(service), base,
                     static_cast<size_t>(length), &SinkToArray, &sink);
  return sink.result;
}

void ServiceDestroy(JNIEnv*, jclass, jlong service) {
  kvs_service_destroy(reinterpret_cast<kvs_service*>(service));
}

// The bytes of a Java byte[] secret, or empty for null.
std::string SecretOf(JNIEnv* env, jbyteArray secret) {
  if (secret == nullptr) return std::string();
  const jsize size = env->GetArrayLength(secret);
  std::string bytes(static_cast<size_t>(size), '\0');
  env->GetByteArrayRegion(secret, 0, size,
                          reinterpret_cast<jbyte*>(bytes.data()));
  return bytes;
}

jlong ServerStart(JNIEnv* env, jclass, jlong service, jstring provider,
                  jstring node, jstring host, jint port, jint workers,
                  jbyteArray secret, jbyteArray client_secret) {
  const std::string provider_name = StringOf(env, provider);
  const std::string node_name = StringOf(env, node);
  const std::string host_name = StringOf(env, host);
  kvs_fabric_options options;
  kvs_fabric_options_init(&options);
  options.provider = provider_name.c_str();
  options.node = node_name.c_str();
  options.host = host_name.c_str();
  options.port = static_cast<uint16_t>(port);
  options.workers = static_cast<uint32_t>(workers);
  const std::string secret_bytes = SecretOf(env, secret);
  options.secret = secret_bytes.data();
  options.secret_bytes = static_cast<uint32_t>(secret_bytes.size());
  const std::string client_secret_bytes = SecretOf(env, client_secret);
  options.client_secret = client_secret_bytes.data();
  options.client_secret_bytes =
      static_cast<uint32_t>(client_secret_bytes.size());
  kvs_fabric_server* server = nullptr;
  if (Failed(env,
             kvs_fabric_server_start(
                 &options, reinterpret_cast<kvs_service*>(service), &server))) {
    return 0;
  }
  return reinterpret_cast<jlong>(server);
}

jint ServerPort(JNIEnv*, jclass, jlong server) {
  return kvs_fabric_server_port(reinterpret_cast<kvs_fabric_server*>(server));
}

jboolean ServerProbe(JNIEnv*, jclass, jlong server) {
  return kvs_fabric_server_probe(
             reinterpret_cast<kvs_fabric_server*>(server)) != 0
             ? JNI_TRUE
             : JNI_FALSE;
}

void ServerStop(JNIEnv*, jclass, jlong server) {
  kvs_fabric_server_stop(reinterpret_cast<kvs_fabric_server*>(server));
}

// `client_secret`: what the client proves (null: none).
jlong ClientConnect(JNIEnv* env, jclass, jstring provider, jstring node,
                    jstring host, jint port, jint buffer_bytes, jint timeout_ms,
                    jbyteArray client_secret) {
  const std::string provider_name = StringOf(env, provider);
  const std::string node_name = StringOf(env, node);
  const std::string host_name = StringOf(env, host);
  kvs_fabric_options options;
  kvs_fabric_options_init(&options);
  options.provider = provider_name.c_str();
  options.node = node_name.c_str();
  options.buffer_bytes = static_cast<uint32_t>(buffer_bytes);
  options.timeout_ms = static_cast<uint32_t>(timeout_ms);
  const std::string secret_bytes = SecretOf(env, client_secret);
  options.client_secret = secret_bytes.data();
  options.client_secret_bytes = static_cast<uint32_t>(secret_bytes.size());
  kvs_fabric_client* client = nullptr;
  if (Failed(env,
             kvs_fabric_client_connect(&options, host_name.c_str(),
                                       static_cast<uint16_t>(port), &client))) {
    return 0;
  }
  return reinterpret_cast<jlong>(client);
}

// Returns KVS_OK or KVS_BUSY; throws for anything else.
jint ClientSubmit(JNIEnv* env, jclass, jlong client, jlong tag,
                  jbyteArray request) {
  const jsize size = env->GetArrayLength(request);
  std::string bytes(static_cast<size_t>(size), '\0');
  env->GetByteArrayRegion(request, 0, size,
                          reinterpret_cast<jbyte*>(bytes.data()));
  const kvs_status status = kvs_fabric_client_submit(
      reinterpret_cast<kvs_fabric_client*>(client), static_cast<uint64_t>(tag),
      bytes.data(), bytes.size());
  if (status == KVS_BUSY) return status;
  Failed(env, status);
  return status;
}

// Finished requests packed: per request, tag u64, status u8, size u32,
// bytes (the reply, or the error message). Null when none finished.
void Pack(void* context, uint64_t tag, kvs_status status, const void* bytes,
          size_t size) {
  auto* packed = static_cast<std::string*>(context);
  char head[13];
  coding::EncodeFixed64(head, tag);
  head[8] = static_cast<char>(status);
  coding::EncodeFixed32(head + 9, static_cast<uint32_t>(size));
  packed->append(head, sizeof head);
  packed->append(static_cast<const char*>(bytes), size);
}

jbyteArray ClientPoll(JNIEnv* env, jclass, jlong client) {
  std::string packed;
  kvs_fabric_client_poll(reinterpret_cast<kvs_fabric_client*>(client), &Pack,
                         &packed);
  if (packed.empty()) return nullptr;
  return NewByteArrayOf(env, packed.data(), packed.size());
}

jint ClientOutstanding(JNIEnv*, jclass, jlong client) {
  return static_cast<jint>(kvs_fabric_client_outstanding(
      reinterpret_cast<kvs_fabric_client*>(client)));
}

void ClientClose(JNIEnv*, jclass, jlong client) {
  kvs_fabric_client_close(reinterpret_cast<kvs_fabric_client*>(client));
}

}  // namespace

bool RegisterFabricNatives(JNIEnv* env, jclass native_methods_class) {
  static const JNINativeMethod kMethods[] = {
      KVS_NATIVE("serviceCreate", "()J", ServiceCreate),
      KVS_NATIVE("serviceAttach", "(JJJJ)V", ServiceAttach),
      KVS_NATIVE("serviceAttachPlaced",
                 "(JJJJZ[B[B[Ljava/lang/String;[I[ZIILjava/lang/String;Z[BZ)V",
                 ServiceAttachPlaced),
      KVS_NATIVE("serviceUseEngine", "(JJ)V", ServiceUseEngine),
      KVS_NATIVE("serviceReplicaDigest", "(JJ)[J", ServiceReplicaDigest),
      KVS_NATIVE("servicePromote", "(JJ[B[B[B)[J", ServicePromote),
      KVS_NATIVE("serviceProbeReplication", "(J)Z", ServiceProbeReplication),
      KVS_NATIVE("serviceHoldsReplica", "(J[B)Z", ServiceHoldsReplica),
      KVS_NATIVE("serviceRequireLease", "(J)V", ServiceRequireLease),
      KVS_NATIVE("serviceRenewLease", "(JJ)V", ServiceRenewLease),
      KVS_NATIVE("serviceBackupsCaughtUp", "(JJ)I", ServiceBackupsCaughtUp),
      KVS_NATIVE("serviceBackupStates", "(JJ)[B", ServiceBackupStates),
      KVS_NATIVE("serviceBackupLags", "(JJ)[J", ServiceBackupLags),
      KVS_NATIVE("serviceBackupFailure", "(JJI)Ljava/lang/String;",
                 ServiceBackupFailure),
      KVS_NATIVE("serviceReplicationStats", "(J)[J", ServiceReplicationStats),
      KVS_NATIVE("serviceRequestStats", "(J)[J", ServiceRequestStats),
      KVS_NATIVE("serviceSetRequestMetrics", "(JZ)V", ServiceSetRequestMetrics),
      KVS_NATIVE("serviceDetach", "(JJ)V", ServiceDetach),
      KVS_NATIVE("serviceDetachFlushed", "(JJ)V", ServiceDetachFlushed),
      KVS_NATIVE("serviceDetachSealed", "(JJI)V", ServiceDetachSealed),
      KVS_NATIVE("serviceTakeOver", "(JJ[J)V", ServiceTakeOver),
      KVS_NATIVE("serviceHandle", "(JLjava/nio/ByteBuffer;II)[B",
                 ServiceHandle),
      KVS_NATIVE("serviceDestroy", "(J)V", ServiceDestroy),
      KVS_NATIVE(
          "fabricServerStart",
          "(JLjava/lang/String;Ljava/lang/String;Ljava/lang/String;II[B[B)J",
          ServerStart),
      KVS_NATIVE("fabricServerPort", "(J)I", ServerPort),
      KVS_NATIVE("fabricServerProbe", "(J)Z", ServerProbe),
      KVS_NATIVE("fabricServerStop", "(J)V", ServerStop),
      KVS_NATIVE(
          "fabricClientConnect",
          "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;III[B)J",
          ClientConnect),
      KVS_NATIVE("fabricClientSubmit", "(JJ[B)I", ClientSubmit),
      KVS_NATIVE("fabricClientPoll", "(J)[B", ClientPoll),
      KVS_NATIVE("fabricClientOutstanding", "(J)I", ClientOutstanding),
      KVS_NATIVE("fabricClientClose", "(J)V", ClientClose),
  };
  return env->RegisterNatives(native_methods_class, kMethods,
                              static_cast<jint>(std::size(kMethods))) == 0;
}

}  // namespace kvs::jni
