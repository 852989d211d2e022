/**
 * Types shared by every KVS module and by both sides of the JNI boundary: the {@link
 * io.kvs.core.StatusCode} every failing operation reports and the {@link io.kvs.core.KvsException}
 * family that carries it to Java callers.
 *
 * <p>This package is pure Java with no dependencies, so the client library can depend on it without
 * pulling in the native data plane.
 */
package io.kvs.core;
