package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;

/**
 * A write failed and surely did not take effect: no server applied it, so sending it again is safe
 * and cannot reorder it behind a later write. The client throws it (or {@link
 * RegionUnavailableException}, one kind of it) only where it knows no attempt reached a replica
 * that could apply it, or every replica that answered refused it before applying it; a write whose
 * fate it cannot know fails with {@link OutcomeUnknownException} instead.
 */
public class NotAppliedException extends KvsException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the last status seen and a message naming the operation. */
  public NotAppliedException(StatusCode status, String message) {
    super(status, message);
  }
}
