package io.kvs.core;

/**
 * The request broke a documented limit ({@link StatusCode#TOO_LARGE}) or passed an invalid argument
 * ({@link StatusCode#INVALID_ARGUMENT}). Retrying the same request cannot succeed.
 */
public final class InvalidRequestException extends KvsException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception; {@code status} must be INVALID_ARGUMENT or TOO_LARGE. */
  public InvalidRequestException(StatusCode status, String message) {
    super(status, message);
    if (status != StatusCode.INVALID_ARGUMENT && status != StatusCode.TOO_LARGE) {
      throw new IllegalArgumentException("not a request error: " + status);
    }
  }
}
