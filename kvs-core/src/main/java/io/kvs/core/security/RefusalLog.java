package io.kvs.core.security;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs refused peers at WARN, at most one line per {@link #INTERVAL_NANOS} (a stranger knocking in
 * a loop must not fill the disk); the next line says how many refusals went unlogged meanwhile.
 * Thread-safe.
 */
public final class RefusalLog {
  /** Ten seconds between refusal lines at most. */
  public static final long INTERVAL_NANOS = 10_000_000_000L;

  private final Logger log;
  private final String what;
  private final AtomicLong lastLogged = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);
  private final AtomicLong unlogged = new AtomicLong();
  private final AtomicLong refusals = new AtomicLong();

  /** Refusals of {@code what} (e.g. "control connection") go to {@code log}. */
  public RefusalLog(Logger log, String what) {
    this.log = log;
    this.what = what;
  }

  /** Counts a refusal of {@code peer} for {@code reason}; logs it unless one was logged lately. */
  public void refused(Object peer, String reason) {
    refusals.incrementAndGet();
    long now = System.nanoTime();
    long last = lastLogged.get();
    if (now - last >= INTERVAL_NANOS && lastLogged.compareAndSet(last, now)) {
      long skipped = unlogged.getAndSet(0);
      log.warn(
          "refused {} from {}: {}{}",
          what,
          peer,
          reason,
          skipped == 0 ? "" : " (and " + skipped + " more refusals not logged)");
    } else {
      unlogged.incrementAndGet();
    }
  }

  /** Refusals so far. */
  public long refusals() {
    return refusals.get();
  }
}
