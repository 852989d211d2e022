/**
 * The Java face of libkvs, the native data plane: {@link io.kvs.nativelib.NativeLibrary} loads it
 * from this jar, {@link io.kvs.nativelib.Crc32c} is the checksum every KVS format uses.
 *
 * <p>Every class here loads the library on first use; callers never need to call {@link
 * io.kvs.nativelib.NativeLibrary#load()} themselves, but may, to fail early with a clear message.
 */
package io.kvs.nativelib;
