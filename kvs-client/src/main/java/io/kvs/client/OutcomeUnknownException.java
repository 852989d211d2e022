package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;

/**
 * A write may or may not have taken effect: it was sent, and then the connection broke, no reply
 * came within the operation timeout, or the primary answered with an error it may have met after
 * applying the write (an IO_ERROR such as "replication failed"). The client never retries such a
 * write by itself, since a retry could apply it twice, the second time after a later write of the
 * same key. The application decides: read the key back, write again knowing it may be applied
 * twice, or give up. {@link #status()} is what was seen: IO_ERROR for a broken connection or a
 * timeout, else the primary's status.
 */
public final class OutcomeUnknownException extends KvsException {
  private static final long serialVersionUID = 1L;

  /** The region the write was sent to. */
  private final long regionId;

  /**
   * Creates the exception.
   *
   * @param status what was seen
   * @param regionId the region the write was sent to
   * @param message names the operation, the region, the server and what happened
   */
  public OutcomeUnknownException(StatusCode status, long regionId, String message) {
    super(status, message);
    this.regionId = regionId;
  }

  /** The region the write was sent to. */
  public long regionId() {
    return regionId;
  }
}
