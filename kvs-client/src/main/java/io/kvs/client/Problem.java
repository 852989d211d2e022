package io.kvs.client;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.Keys;
import java.time.Duration;

/**
 * Why one attempt of an operation did not get through, and what to do before the next.
 *
 * @param status the status to report if the operation times out
 * @param regionId the region the attempt was routed to, -1 if none
 * @param serverId the server it was sent to, empty if none
 * @param reason for humans, e.g. "NOT_PRIMARY from server s2: ..."
 * @param action what to do before retrying
 */
record Problem(StatusCode status, long regionId, String serverId, String reason, Action action) {
  /** What the client does before it retries. */
  enum Action {
    /** Re-read the region (its map entry is out of date), then wait for a change or back off. */
    REFRESH,
    /** Re-read the region and its primary's server entry, then wait or back off. */
    RECONNECT,
    /** Back off: the server is busy. */
    BACK_OFF
  }

  /** No region of the map holds {@code key}: the map is empty or being changed. */
  static Problem noRegion(byte[] key, int regions) {
    return new Problem(
        StatusCode.WRONG_REGION,
        -1,
        "",
        "no region of the map (" + regions + " regions) holds key " + abbreviate(Keys.print(key)),
        Action.REFRESH);
  }

  /** The exception an operation named {@code operation} fails with after {@code timeout}. */
  RegionUnavailableException timedOut(String operation, Duration timeout) {
    String what = regionId >= 0 ? "region " + regionId + " not available" : "no region available";
    return new RegionUnavailableException(
        status, regionId, operation + ": " + what + " within " + format(timeout) + ": " + reason);
  }

  /** "10 s", "1500 ms". */
  static String format(Duration duration) {
    long millis = duration.toMillis();
    return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
  }

  static String abbreviate(String text) {
    return text.length() <= 64 ? text : text.substring(0, 61) + "...";
  }
}
