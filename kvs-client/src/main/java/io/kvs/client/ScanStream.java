package io.kvs.client;

import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.core.cluster.Keys;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * The pairs with keys in {@code [from, to)}, in key order, read page by page as they are consumed
 * ({@link KvsClient#scanStream}), or in descending key order ({@link KvsClient#reverseScanStream}).
 * Each page is one scan (across regions, with the client's retries: a region that moves, splits or
 * fails over meanwhile is followed); the next page starts just after (reverse: just below) the last
 * key returned. So a pair present for the stream's whole duration is returned exactly once; a pair
 * written or deleted meanwhile may or may not be.
 *
 * <p>Bounded: at most two pages are held -- the one being consumed and the next, asked for when the
 * consumer starts on the current one (back-pressure: nothing more is read until it is consumed). A
 * page holds at most {@code pageSize} pairs and about 4 MiB of keys and values. A page that fails
 * fails {@link #next} with its {@link KvsException}, and the stream ends. Not thread-safe: one
 * consumer. {@link #close} drops what was read ahead; closing is optional once the stream ended.
 */
public final class ScanStream implements Iterator<KeyValue>, AutoCloseable {
  private final BiFunction<byte[], Integer, CompletableFuture<List<KeyValue>>> scan;
  private final boolean reverse;
  private final byte[] to;
  private final int pageSize;
  private List<KeyValue> page = List.of();
  private int at;
  private CompletableFuture<List<KeyValue>> ahead; // the next page, asked for; null: none
  private byte[] last; // the last key handed out (null: none yet)
  private boolean closed;

  /**
   * @param scan a scan from a key (inclusive) to {@code to} of at most so many pairs
   */
  ScanStream(
      BiFunction<byte[], Integer, CompletableFuture<List<KeyValue>>> scan,
      byte[] from,
      byte[] to,
      int pageSize) {
    this(scan, false, from, to, pageSize);
  }

  /**
   * @param scan reverse: a scan down from a key (exclusive; empty: the last key of all) to the
   *     stream's start, of at most so many pairs; else as above
   * @param start where the first page starts: reverse, the stream's end (exclusive)
   */
  private ScanStream(
      BiFunction<byte[], Integer, CompletableFuture<List<KeyValue>>> scan,
      boolean reverse,
      byte[] start,
      byte[] to,
      int pageSize) {
    this.scan = scan;
    this.reverse = reverse;
    this.to = to;
    this.pageSize = pageSize;
    this.ahead = scan.apply(start, pageSize);
  }

  /** A stream in descending key order: its pages from {@code to} (exclusive) down. */
  static ScanStream reverse(
      BiFunction<byte[], Integer, CompletableFuture<List<KeyValue>>> scanDown,
      byte[] to,
      int pageSize) {
    return new ScanStream(scanDown, true, to, new byte[0], pageSize);
  }

  @Override
  public boolean hasNext() {
    while (!closed && at == page.size()) {
      if (ahead == null) {
        return false;
      }
      List<KeyValue> fetched = KvsClient.await(ahead);
      ahead = null;
      // A page after the first starts at the last key handed out, which it may hold again
      // (reverse: below it, exclusive, so none is).
      int skip = 0;
      while (skip < fetched.size()
          && last != null
          && (reverse
              ? Keys.compare(fetched.get(skip).key(), last) >= 0
              : Keys.compare(fetched.get(skip).key(), last) <= 0)) {
        skip++;
      }
      page = fetched.subList(skip, fetched.size());
      at = 0;
      // Fewer than asked: the range holds nothing past this page.
      boolean exhausted = fetched.size() < requested(last);
      if (!page.isEmpty() && !exhausted) {
        byte[] resume = page.get(page.size() - 1).key();
        if (reverse || to.length == 0 || Keys.compare(resume, to) < 0) {
          ahead = scan.apply(resume, requested(resume));
        }
      }
      if (page.isEmpty() && exhausted) {
        return false;
      }
    }
    return !closed && at < page.size();
  }

  @Override
  public KeyValue next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the scan stream has no more pairs");
    }
    KeyValue pair = page.get(at++);
    last = Arrays.copyOf(pair.key(), pair.key().length);
    return pair;
  }

  /** The pairs a page from {@code start} asks for: one more when it starts at a key already had. */
  private int requested(byte[] start) {
    return start == null || reverse ? pageSize : pageSize + 1;
  }

  /** Stops the stream: what was read ahead is dropped, and {@link #hasNext} is false. */
  @Override
  public void close() {
    closed = true;
    if (ahead != null) {
      ahead.cancel(false);
      ahead = null;
    }
    page = List.of();
    at = 0;
  }
}
