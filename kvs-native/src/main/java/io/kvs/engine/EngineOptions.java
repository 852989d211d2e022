package io.kvs.engine;

/** Immutable options of an {@link Engine}; build them with {@link #builder()}. */
public final class EngineOptions {
  private final boolean sync;
  private final int flushIntervalMillis;
  private final boolean directIo;
  private final long l0SizeBytes;
  private final int growthFactor;
  private final int smallKvBytesMax;
  private final int mediumKvBytesMax;
  private final long memoryBudgetBytes;
  private final boolean createIfMissing;

  private EngineOptions(Builder builder) {
    this.sync = builder.sync;
    this.flushIntervalMillis = builder.flushIntervalMillis;
    this.directIo = builder.directIo;
    this.l0SizeBytes = builder.l0SizeBytes;
    this.growthFactor = builder.growthFactor;
    this.smallKvBytesMax = builder.smallKvBytesMax;
    this.mediumKvBytesMax = builder.mediumKvBytesMax;
    this.memoryBudgetBytes = builder.memoryBudgetBytes;
    this.createIfMissing = builder.createIfMissing;
  }

  /** A builder holding the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults. */
  public static EngineOptions defaults() {
    return builder().build();
  }

  public boolean sync() {
    return sync;
  }

  public int flushIntervalMillis() {
    return flushIntervalMillis;
  }

  public boolean directIo() {
    return directIo;
  }

  public long l0SizeBytes() {
    return l0SizeBytes;
  }

  public int growthFactor() {
    return growthFactor;
  }

  public int smallKvBytesMax() {
    return smallKvBytesMax;
  }

  public int mediumKvBytesMax() {
    return mediumKvBytesMax;
  }

  public long memoryBudgetBytes() {
    return memoryBudgetBytes;
  }

  public boolean createIfMissing() {
    return createIfMissing;
  }

  /** Builds {@link EngineOptions}; every setter validates its argument. */
  public static final class Builder {
    private boolean sync = false;
    private int flushIntervalMillis = 50;
    private boolean directIo = true;
    private long l0SizeBytes = 64L << 20;
    private int growthFactor = 8;
    private int smallKvBytesMax = 119;
    private int mediumKvBytesMax = 1022;
    private long memoryBudgetBytes = 256L << 20;
    private boolean createIfMissing = true;

    private Builder() {}

    /**
     * Whether a write returns only once durable. Default {@code false}: a write is durable within
     * {@link #flushIntervalMillis(int)}, or when {@link Region#sync()} returns.
     */
    public Builder sync(boolean sync) {
      this.sync = sync;
      return this;
    }

    /**
     * Bound on how long an acknowledged write stays volatile when not in sync mode. 1..60000,
     * default 50.
     */
    public Builder flushIntervalMillis(int millis) {
      this.flushIntervalMillis = checkRange("flushIntervalMillis", millis, 1, 60_000);
      return this;
    }

    /** Whether to bypass the page cache (O_DIRECT). Default {@code true}. */
    public Builder directIo(boolean directIo) {
      this.directIo = directIo;
      return this;
    }

    /**
     * Memory a region's in-memory level may use before compaction. At least 1 MiB; default 64 MiB.
     */
    public Builder l0SizeBytes(long bytes) {
      if (bytes < (1L << 20)) {
        throw new IllegalArgumentException("l0SizeBytes must be at least 1 MiB: " + bytes);
      }
      this.l0SizeBytes = bytes;
      return this;
    }

    /** Size ratio between consecutive device levels. 2..64, default 8. */
    public Builder growthFactor(int factor) {
      this.growthFactor = checkRange("growthFactor", factor, 2, 64);
      return this;
    }

    /**
     * KV pairs (key + value bytes) up to {@code small} are small (stored in place), up to {@code
     * medium} medium (transient log, merged in place at the last level), larger ones large (value
     * log). Defaults 119 and 1022: the thesis's small bound, and the design's 1023-byte large
     * pairs.
     */
    public Builder kvSizeThresholds(int small, int medium) {
      if (small < 0 || medium < small) {
        throw new IllegalArgumentException(
            "need 0 <= small <= medium, got small=" + small + ", medium=" + medium);
      }
      this.smallKvBytesMax = small;
      this.mediumKvBytesMax = medium;
      return this;
    }

    /**
     * Memory for the node cache (half) and every region's in-memory levels (half) together; writers
     * stall briefly when the in-memory levels exceed their half. At least 8 MiB; default 256 MiB.
     */
    public Builder memoryBudgetBytes(long bytes) {
      if (bytes < (8L << 20)) {
        throw new IllegalArgumentException("memoryBudgetBytes must be at least 8 MiB: " + bytes);
      }
      this.memoryBudgetBytes = bytes;
      return this;
    }

    /** Whether to format a missing or empty volume file. Default {@code true}. */
    public Builder createIfMissing(boolean create) {
      this.createIfMissing = create;
      return this;
    }

    public EngineOptions build() {
      return new EngineOptions(this);
    }

    private static int checkRange(String name, int value, int min, int max) {
      if (value < min || value > max) {
        throw new IllegalArgumentException(
            name + " must be in [" + min + ", " + max + "]: " + value);
      }
      return value;
    }
  }
}
