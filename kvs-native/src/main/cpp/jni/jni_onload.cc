// Library entry points called by the JVM.

#include <jni.h>

#include "jni/exceptions.h"
#include "jni/registration.h"

namespace {
constexpr jint kRequiredJniVersion = JNI_VERSION_10;
}  // namespace

extern "C" JNIEXPORT jint JNI_OnLoad(JavaVM* vm, void* /*reserved*/) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), kRequiredJniVersion) !=
      JNI_OK) {
    return JNI_ERR;
  }
  jclass native_methods = env->FindClass(kvs::jni::kNativeMethodsClass);
  if (native_methods == nullptr) {
    return JNI_ERR;
  }
  const bool registered =
      kvs::jni::InitExceptions(env, native_methods) &&
      kvs::jni::RegisterLibraryNatives(env, native_methods) &&
      kvs::jni::RegisterChecksumNatives(env, native_methods) &&
      kvs::jni::RegisterEngineNatives(env, native_methods) &&
      kvs::jni::RegisterFabricNatives(env, native_methods) &&
      kvs::jni::RegisterDoorNatives(env, native_methods);
  env->DeleteLocalRef(native_methods);
  return registered ? kRequiredJniVersion : JNI_ERR;
}

extern "C" JNIEXPORT void JNI_OnUnload(JavaVM* vm, void* /*reserved*/) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), kRequiredJniVersion) ==
      JNI_OK) {
    kvs::jni::ShutdownExceptions(env);
  }
}
