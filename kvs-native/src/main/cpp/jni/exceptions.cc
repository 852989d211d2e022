#include "jni/exceptions.h"

#include <string>

#include "util/check.h"

namespace kvs::jni {
namespace {

jclass factory_class = nullptr;  // global reference
jmethodID factory_method = nullptr;

}  // namespace

bool InitExceptions(JNIEnv* env, jclass native_methods_class) {
  factory_method = env->GetStaticMethodID(
      native_methods_class, "exceptionFor",
      "(ILjava/lang/String;)Ljava/lang/RuntimeException;");
  if (factory_method == nullptr) {
    return false;
  }
  factory_class = static_cast<jclass>(env->NewGlobalRef(native_methods_class));
  return factory_class != nullptr;
}

void ShutdownExceptions(JNIEnv* env) {
  if (factory_class != nullptr) {
    env->DeleteGlobalRef(factory_class);
    factory_class = nullptr;
  }
}

void ThrowStatus(JNIEnv* env, const Status& status) {
  KVS_CHECK(!status.ok());
  if (env->ExceptionCheck()) {
    return;  // keep the first failure; it is the more precise one
  }
  const std::string message(status.message());
  jstring text = env->NewStringUTF(message.c_str());
  if (text == nullptr) {
    return;  // OutOfMemoryError is pending
  }
  auto exception = static_cast<jthrowable>(env->CallStaticObjectMethod(
      factory_class, factory_method, static_cast<jint>(status.code()), text));
  env->DeleteLocalRef(text);
  if (exception != nullptr && !env->ExceptionCheck()) {
    env->Throw(exception);
    env->DeleteLocalRef(exception);
  }
}

bool Failed(JNIEnv* env, kvs_status status) {
  if (status == KVS_OK) {
    return false;
  }
  ThrowStatus(env, Status::FromCode(static_cast<Status::Code>(status),
                                    kvs_last_error_message()));
  return true;
}

}  // namespace kvs::jni
