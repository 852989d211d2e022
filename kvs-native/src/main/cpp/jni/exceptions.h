// The one place where native errors become Java exceptions.
//
// A Status is turned into an exception by the Java factory
// NativeMethods.exceptionFor(int, String), which maps codes to the
// io.kvs.core.KvsException family; this file only calls it. The factory is
// looked up once in JNI_OnLoad.

#ifndef KVS_JNI_EXCEPTIONS_H_
#define KVS_JNI_EXCEPTIONS_H_

#include <jni.h>

#include "kvs/kvs.h"
#include "util/status.h"

namespace kvs::jni {

// Looks up and pins the exception factory of `native_methods_class`.
// Returns false with a pending Java exception on failure.
bool InitExceptions(JNIEnv* env, jclass native_methods_class);

// Releases what InitExceptions pinned.
void ShutdownExceptions(JNIEnv* env);

// Raises `status` (which must not be OK) as the pending Java exception. The
// caller must return to Java right after, without further JNI calls.
void ThrowStatus(JNIEnv* env, const Status& status);

// Raises a failed C ABI call's status (with kvs_last_error_message) as the
// pending Java exception; returns whether it failed.
bool Failed(JNIEnv* env, kvs_status status);

}  // namespace kvs::jni

#endif  // KVS_JNI_EXCEPTIONS_H_
