package io.kvs.bench.engine;

/** The operation types of the YCSB core workloads used here. */
public enum Operation {
  /** Writes a new record. */
  INSERT,
  /** Reads one record. */
  READ,
  /** Overwrites an existing record with a new value (whose size class is drawn again). */
  UPDATE,
  /** Reads a run of consecutive records (1 to 100, uniform) from a chosen start key. */
  SCAN
}
