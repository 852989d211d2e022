package io.kvs.nativelib;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;

/**
 * libkvs cannot be used in this JVM: no build for this platform, extraction or loading failed, or
 * its version does not match. The message names the OS and architecture and what to do.
 */
public final class NativeLibraryUnavailableException extends KvsException {
  private static final long serialVersionUID = 1L;

  NativeLibraryUnavailableException(String message) {
    super(StatusCode.INTERNAL, message);
  }

  NativeLibraryUnavailableException(String message, Throwable cause) {
    super(StatusCode.INTERNAL, message, cause);
  }
}
