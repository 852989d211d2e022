// Native method tables, one per area, registered on
// io.kvs.nativelib.internal.NativeMethods by JNI_OnLoad.

#ifndef KVS_JNI_REGISTRATION_H_
#define KVS_JNI_REGISTRATION_H_

#include <jni.h>

namespace kvs::jni {

// The Java class every native method of the library is declared in.
inline constexpr char kNativeMethodsClass[] =
    "io/kvs/nativelib/internal/NativeMethods";

// One JNINativeMethod table entry.
#define KVS_NATIVE(name, signature, function)              \
  {                                                        \
    const_cast<char*>(name), const_cast<char*>(signature), \
        reinterpret_cast<void*>(&function)                 \
  }

// Each returns false with a pending Java exception on failure.
bool RegisterLibraryNatives(JNIEnv* env, jclass native_methods_class);
bool RegisterChecksumNatives(JNIEnv* env, jclass native_methods_class);
bool RegisterEngineNatives(JNIEnv* env, jclass native_methods_class);
bool RegisterFabricNatives(JNIEnv* env, jclass native_methods_class);
bool RegisterDoorNatives(JNIEnv* env, jclass native_methods_class);

}  // namespace kvs::jni

#endif  // KVS_JNI_REGISTRATION_H_
