package io.kvs.core;

/**
 * The operating system reported an I/O error, including a full device. Nothing acknowledged before
 * the error is lost; the failed operation was not applied.
 */
public final class StorageIoException extends KvsException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message for humans. */
  public StorageIoException(String message) {
    super(StatusCode.IO_ERROR, message);
  }
}
