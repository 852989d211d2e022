/**
 * The JNI boundary. {@link io.kvs.nativelib.internal.NativeMethods} declares every native method of
 * libkvs (registered by {@code JNI_OnLoad}) and the single factory that turns native status codes
 * into exceptions. Not API: it is public only so wrappers in other packages can reach it.
 */
package io.kvs.nativelib.internal;
