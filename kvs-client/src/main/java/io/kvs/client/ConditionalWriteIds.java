package io.kvs.client;

import io.kvs.core.wire.WriteId;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client's write ids for its conditional writes (compare-and-set, increment; {@link WriteId}):
 * its own random id, a sequence per write, and per region the largest LSN a reply of it named (the
 * floor a retry carries). A conditional write whose outcome a failure left unknown is sent again
 * under its id, and the region answers it as the first attempt was; a region that may have
 * forgotten the first attempt answers IO_ERROR, and the caller gets {@link
 * OutcomeUnknownException}.
 *
 * <p>Bounded: the floors of at most {@link #REGIONS_MAX} regions are kept; past that they are
 * forgotten (a later retry carries floor 0, which a region that forgot nothing still accepts).
 */
final class ConditionalWriteIds {
  static final int REGIONS_MAX = 65_536;

  private final long client;
  private final AtomicLong sequence = new AtomicLong();
  private final Map<Long, Long> floors = new ConcurrentHashMap<>();

  ConditionalWriteIds() {
    long drawn = 0;
    SecureRandom random = new SecureRandom();
    while (drawn == 0) {
      drawn = random.nextLong();
    }
    client = drawn;
  }

  /** A new write's id (its first attempt). */
  WriteId next() {
    return new WriteId(client, sequence.incrementAndGet(), 0, false);
  }

  /** The largest LSN a reply of region {@code regionId} named so far (0: none). */
  long floor(long regionId) {
    return floors.getOrDefault(regionId, 0L);
  }

  /** Notes a reply of region {@code regionId} naming {@code lsn}. */
  void observed(long regionId, long lsn) {
    if (lsn == 0) {
      return;
    }
    if (floors.size() >= REGIONS_MAX && !floors.containsKey(regionId)) {
      floors.clear();
    }
    floors.merge(regionId, lsn, Math::max);
  }
}
