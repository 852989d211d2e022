package io.kvs.bench.engine;

import io.kvs.tools.JsonLine;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * One key-value store under test, opened on its own directory. The client threads of a benchmark
 * call it concurrently: implementations must be thread-safe.
 */
public interface KvSystem extends AutoCloseable {
  /**
   * The system's name in results: {@code kvs}, {@code rocksdb}, {@code rocksdb-wal50} or {@code
   * blobdb}.
   */
  String name();

  /** The directory holding every file of the system (measured for space amplification). */
  Path directory();

  /**
   * Writes the value between {@code value}'s position and limit under the key between {@code key}'s
   * position and limit. Both are direct buffers; positions are left unchanged.
   */
  void put(ByteBuffer key, ByteBuffer value);

  /**
   * Reads the value of the key between {@code key}'s position and limit into {@code value} (cleared
   * first). Returns the value's size, or -1 if the key has none. {@code value} is direct and large
   * enough for any value of the benchmark.
   */
  int get(ByteBuffer key, ByteBuffer value);

  /**
   * Reads up to {@code count} consecutive pairs starting at the first key at or after {@code
   * start}, adding what it read to {@code totals}.
   */
  void scan(byte[] start, int count, ScanTotals totals);

  /** Counters worth keeping with the results (compactions, files per level ...). */
  JsonLine stats();

  /** Closes the system; its files stay. */
  @Override
  void close();

  /** What scans read: pairs and their key + value bytes. Per client thread, not thread-safe. */
  final class ScanTotals {
    long pairs;
    long kvBytes;

    /** Counts one pair of {@code keyBytes + valueBytes}. */
    public void add(int keyBytes, int valueBytes) {
      pairs++;
      kvBytes += keyBytes + valueBytes;
    }

    public long pairs() {
      return pairs;
    }

    public long kvBytes() {
      return kvBytes;
    }
  }
}
