package io.kvs.core.wire;

/**
 * A conditional write's id (COMPARE_AND_SET, INCREMENT; docs/PROTOCOL.md): the client's id and its
 * sequence number for the write, kept with the write on every replica, so that a retry is answered
 * as the first attempt was instead of being applied again; whether this attempt is a retry; and a
 * retry's floor, the largest LSN of the region the client saw in a reply before the first attempt
 * (a region that may have forgotten an earlier write answers that the retry's outcome is unknown).
 *
 * @param client the client's id (with {@code sequence}: 0 and 0 mean none)
 * @param sequence the write's number at that client
 * @param floor for a retry: the floor; else 0
 * @param retry whether this attempt is a retry
 */
public record WriteId(long client, long sequence, long floor, boolean retry) {
  /** No write id: the write is never retried once it may have been sent. */
  public static final WriteId NONE = new WriteId(0, 0, 0, false);

  /** Whether this names a write (a client and a sequence). */
  public boolean present() {
    return client != 0 || sequence != 0;
  }

  /** This id's retry, with {@code floor}. */
  public WriteId asRetry(long floorLsn) {
    return new WriteId(client, sequence, floorLsn, true);
  }
}
