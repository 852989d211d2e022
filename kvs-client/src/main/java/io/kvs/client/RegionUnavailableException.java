package io.kvs.client;

import io.kvs.core.StatusCode;

/**
 * An operation could not reach a serving primary of a region within the operation timeout: the
 * region had no primary, its primary was not a live server or could not be connected to, or the
 * servers kept answering NOT_PRIMARY, WRONG_REGION, STALE_EPOCH, CLOSED, BUSY, OVERLOADED or
 * NOT_ENOUGH_REPLICAS while the client refreshed its region map and retried. For a write this means
 * it was not applied (a {@link NotAppliedException}): had any attempt reached a primary without an
 * answer that refused it, the write would have failed at once with {@link OutcomeUnknownException}.
 * {@link #status()} is the last status seen; the message names the operation, the region and the
 * last reason.
 */
public final class RegionUnavailableException extends NotAppliedException {
  private static final long serialVersionUID = 1L;

  /** The region, or -1. */
  private final long regionId;

  /**
   * Creates the exception.
   *
   * @param status the last status seen
   * @param regionId the region, or -1 if no region of the map held the key
   * @param message names the operation, the region and the last reason
   */
  public RegionUnavailableException(StatusCode status, long regionId, String message) {
    super(status, message);
    this.regionId = regionId;
  }

  /**
   * The region that was not available.
   *
   * @return its id, or -1 if no region of the map held the key
   */
  public long regionId() {
    return regionId;
  }
}
