package io.kvs.core;

import java.util.Objects;

/**
 * The base of every error KVS reports. Unchecked, because the asynchronous API reports errors
 * through {@link java.util.concurrent.CompletableFuture} and checked exceptions do not compose with
 * it. Subclasses exist for the statuses a caller typically handles differently; every instance
 * carries its {@link StatusCode}.
 */
public class KvsException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final StatusCode status;

  /** Creates an exception with the given status and a message for humans. */
  public KvsException(StatusCode status, String message) {
    super(message);
    this.status = Objects.requireNonNull(status, "status");
  }

  /** Creates an exception with the given status, message and cause. */
  public KvsException(StatusCode status, String message, Throwable cause) {
    super(message, cause);
    this.status = Objects.requireNonNull(status, "status");
  }

  /** Why the operation failed. */
  public StatusCode status() {
    return status;
  }

  /**
   * Builds the most specific exception for a status: the single mapping from status codes to
   * exception types, used for native errors and (later) for wire replies alike.
   *
   * @throws IllegalArgumentException for {@link StatusCode#OK}, which is not an error
   */
  public static KvsException of(StatusCode status, String message) {
    switch (status) {
      case OK:
        throw new IllegalArgumentException("OK is not an error: " + message);
      case CORRUPTION:
        return new CorruptionException(message);
      case IO_ERROR:
        return new StorageIoException(message);
      case INVALID_ARGUMENT:
      case TOO_LARGE:
        return new InvalidRequestException(status, message);
      case CLOSED:
        return new ClosedException(message);
      default:
        return new KvsException(status, message);
    }
  }
}
