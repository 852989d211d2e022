package io.kvs.bench.engine;

/**
 * Hands out the record numbers of inserts and tracks how many are done: {@link #acknowledged()} is
 * the count of numbers below which every insert has completed, so readers only pick records that
 * exist (YCSB's acknowledged counter). Thread-safe.
 */
public final class InsertSequence {
  /** How far completions may run ahead of the oldest unfinished insert. */
  private static final int WINDOW = 1 << 20;

  private final long[] doneBits = new long[WINDOW / 64];
  private long next;
  private volatile long acknowledged;

  /** A sequence whose first {@code start} records already exist. */
  public InsertSequence(long start) {
    this.next = start;
    this.acknowledged = start;
  }

  /** The number of the next record to insert. */
  public synchronized long allocate() {
    return next++;
  }

  /** Records numbered below this all exist. */
  public long acknowledged() {
    return acknowledged;
  }

  /** Numbers handed out so far (inserted or in flight). */
  public synchronized long allocated() {
    return next;
  }

  /** Marks record {@code number} (from {@link #allocate()}) as inserted. */
  public synchronized void acknowledge(long number) {
    while (number - acknowledged >= WINDOW) {
      // A straggler holds the oldest number; bounded, because it finishes one operation.
      try {
        wait(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while acknowledging an insert", e);
      }
    }
    int slot = (int) (number % WINDOW);
    doneBits[slot >>> 6] |= 1L << slot;
    long advanced = acknowledged;
    while (true) {
      int head = (int) (advanced % WINDOW);
      long mask = 1L << head;
      if ((doneBits[head >>> 6] & mask) == 0) {
        break;
      }
      doneBits[head >>> 6] &= ~mask;
      advanced++;
    }
    if (advanced != acknowledged) {
      acknowledged = advanced;
      notifyAll();
    }
  }
}
