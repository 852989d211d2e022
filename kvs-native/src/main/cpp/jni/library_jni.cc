// Natives describing the library itself: version, ABI, build, status names.

#include <jni.h>

#include <iterator>

#include "jni/registration.h"
#include "kvs/kvs.h"

namespace kvs::jni {
namespace {

jstring Version(JNIEnv* env, jclass) {
  return env->NewStringUTF(kvs_version());
}

jint AbiVersion(JNIEnv*, jclass) {
  return static_cast<jint>(kvs_abi_version());
}

jstring BuildInfo(JNIEnv* env, jclass) {
  return env->NewStringUTF(kvs_build_info());
}

jstring StatusName(JNIEnv* env, jclass, jint code) {
  return env->NewStringUTF(kvs_status_name(static_cast<kvs_status>(code)));
}

}  // namespace

bool RegisterLibraryNatives(JNIEnv* env, jclass native_methods_class) {
  static const JNINativeMethod kMethods[] = {
      {const_cast<char*>("version"), const_cast<char*>("()Ljava/lang/String;"),
       reinterpret_cast<void*>(&Version)},
      {const_cast<char*>("abiVersion"), const_cast<char*>("()I"),
       reinterpret_cast<void*>(&AbiVersion)},
      {const_cast<char*>("buildInfo"),
       const_cast<char*>("()Ljava/lang/String;"),
       reinterpret_cast<void*>(&BuildInfo)},
      {const_cast<char*>("statusName"),
       const_cast<char*>("(I)Ljava/lang/String;"),
       reinterpret_cast<void*>(&StatusName)},
  };
  return env->RegisterNatives(native_methods_class, kMethods,
                              static_cast<jint>(std::size(kMethods))) == 0;
}

}  // namespace kvs::jni
