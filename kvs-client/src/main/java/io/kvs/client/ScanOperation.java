package io.kvs.client;

import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A scan of {@code [from, to)}, across regions in key order, up to a limit of pairs. Each round
 * asks the region holding the cursor for the pairs from the cursor to the region's end (or {@code
 * to}); if the region holds more, the next round continues in it just after the last key returned,
 * else at the region's end key, in the next region. The operation timeout bounds each round's
 * retries, not the whole scan.
 *
 * <p>Reverse ({@link #startReverse}): in descending key order from the last key below {@code to}
 * down to {@code from}. The cursor is then an exclusive upper bound: each round asks the region
 * holding the keys just below it (SCAN_REVERSE) for the pairs from there down to the region's start
 * (or {@code from}); the next round continues below the last key returned, or below the region's
 * start in the region before it.
 */
final class ScanOperation extends Operation<List<KeyValue>> {
  /** Bound on the keys and values of one reply. */
  static final int PAGE_BYTES = WireCodec.SCAN_BYTES_MAX;

  private final byte[] to; // empty: no bound
  private final byte[] from; // reverse: the lowest key (empty: no bound)
  private final boolean reverse;
  private final int limit;
  private final List<KeyValue> pairs = new ArrayList<>();
  // The next round's start; when resumeAfter, pairs at the cursor itself are already taken (a key
  // of the maximum size has no successor of legal size to resume from).
  private byte[] cursor;
  private boolean resumeAfter;

  private ScanOperation(ClientContext context, byte[] from, byte[] to, int limit, boolean reverse) {
    super(context, reverse ? "reverse-scan" : "scan");
    this.cursor = reverse ? to : from;
    this.from = from;
    this.to = to;
    this.limit = limit;
    this.reverse = reverse;
  }

  static CompletableFuture<List<KeyValue>> start(
      ClientContext context, byte[] from, byte[] to, int limit) {
    return new ScanOperation(context, from, to, limit, false).start();
  }

  /** The pairs of {@code [from, to)} in descending key order, at most {@code limit}. */
  static CompletableFuture<List<KeyValue>> startReverse(
      ClientContext context, byte[] from, byte[] to, int limit) {
    return new ScanOperation(context, from, to, limit, true).start();
  }

  @Override
  CompletableFuture<Step> round(Topology topology) {
    if (reverse) {
      return reverseRound(topology);
    }
    RegionDescriptor region = topology.regions().firstFrom(cursor).orElse(null);
    if (region == null || !region.contains(cursor)) {
      // A complete map has a region for every key: this one is being changed.
      return CompletableFuture.completedFuture(
          Step.retry(Problem.noRegion(cursor, topology.regions().size()), false));
    }
    boolean endsAtTo =
        to.length > 0 && (region.end().length == 0 || Keys.compare(to, region.end()) <= 0);
    byte[] end = endsAtTo ? to : region.end().length == 0 ? null : region.end();
    int want = Math.min(limit - pairs.size() + (resumeAfter ? 1 : 0), WireCodec.SCAN_LIMIT_MAX);
    Request request = Request.scan(0, region.id(), region.epoch(), cursor, end, want, PAGE_BYTES);
    return exchangeForOk(
        topology,
        region,
        request,
        outcome -> take(outcome.reply(), region, end == null || endsAtTo, outcome.serverId()));
  }

  private CompletableFuture<Step> reverseRound(Topology topology) {
    RegionDescriptor region = topology.regions().lastBelow(cursor).orElse(null);
    if (region == null) {
      // A complete map has a region below every key: this one is being changed.
      return CompletableFuture.completedFuture(
          Step.retry(Problem.noRegion(cursor, topology.regions().size()), false));
    }
    boolean lastRegion =
        region.start().length == 0 || (from.length > 0 && Keys.compare(from, region.start()) >= 0);
    int want = Math.min(limit - pairs.size(), WireCodec.SCAN_LIMIT_MAX);
    Request request =
        Request.scanReverse(
            0,
            region.id(),
            region.epoch(),
            from,
            cursor.length == 0 ? null : cursor,
            want,
            PAGE_BYTES);
    return exchangeForOk(
        topology,
        region,
        request,
        outcome -> {
          Reply reply = outcome.reply();
          for (KeyValue pair : reply.pairs()) {
            if (pairs.size() == limit) {
              return Step.DONE;
            }
            pairs.add(pair);
          }
          if (pairs.size() == limit) {
            return Step.DONE;
          }
          if (reply.more()) {
            if (reply.pairs().isEmpty()) {
              throw new KvsException(
                  StatusCode.INTERNAL,
                  "reverse-scan: server "
                      + outcome.serverId()
                      + " answered no pair for region "
                      + region.id()
                      + " but said there were more");
            }
            cursor = reply.pairs().get(reply.pairs().size() - 1).key(); // exclusive
            return Step.CONTINUE;
          }
          if (lastRegion) {
            return Step.DONE;
          }
          cursor = region.start();
          return Step.CONTINUE;
        });
  }

  /** Takes a reply's pairs and moves the cursor. */
  private Step take(Reply reply, RegionDescriptor region, boolean lastRegion, String serverId) {
    int added = 0;
    for (KeyValue pair : reply.pairs()) {
      if (resumeAfter && Arrays.equals(pair.key(), cursor)) {
        continue;
      }
      if (pairs.size() == limit) {
        return Step.DONE;
      }
      pairs.add(pair);
      added++;
    }
    if (pairs.size() == limit) {
      return Step.DONE;
    }
    if (reply.more()) {
      if (added == 0) {
        throw new KvsException(
            StatusCode.INTERNAL,
            "scan: server "
                + serverId
                + " answered no new pair for region "
                + region.id()
                + " but said there were more");
      }
      byte[] last = reply.pairs().get(reply.pairs().size() - 1).key();
      if (last.length < WireCodec.KEY_BYTES_MAX) {
        cursor = Arrays.copyOf(last, last.length + 1); // the smallest key after last
        resumeAfter = false;
      } else {
        cursor = last;
        resumeAfter = true;
      }
      return Step.CONTINUE;
    }
    if (lastRegion) {
      return Step.DONE;
    }
    cursor = region.end();
    resumeAfter = false;
    return Step.CONTINUE;
  }

  @Override
  List<KeyValue> value() {
    return List.copyOf(pairs);
  }
}
