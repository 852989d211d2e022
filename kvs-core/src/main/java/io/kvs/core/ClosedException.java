package io.kvs.core;

/** The handle the operation was called on was already closed. */
public final class ClosedException extends KvsException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message for humans. */
  public ClosedException(String message) {
    super(StatusCode.CLOSED, message);
  }
}
