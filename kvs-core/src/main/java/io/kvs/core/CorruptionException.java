package io.kvs.core;

/**
 * Stored or received bytes failed a checksum or format check. The data was not served; the region
 * or message that held it is refused until repaired.
 */
public final class CorruptionException extends KvsException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message for humans. */
  public CorruptionException(String message) {
    super(StatusCode.CORRUPTION, message);
  }
}
