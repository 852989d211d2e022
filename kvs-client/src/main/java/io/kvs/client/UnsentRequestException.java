package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;

/**
 * A connection failed a request before any of it reached the server (the connection was already
 * closed, or the write of the request failed): so a write that met it was not applied, and the
 * client may retry it elsewhere.
 */
final class UnsentRequestException extends KvsException {
  private static final long serialVersionUID = 1L;

  UnsentRequestException(String message, Throwable cause) {
    super(StatusCode.IO_ERROR, message, cause);
  }
}
