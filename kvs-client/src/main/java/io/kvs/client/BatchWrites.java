package io.kvs.client;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.KvsException;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.wire.WireCodec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes many keys across regions ({@link KvsClient#writeAll}): grouped by region on the client's
 * map, each region's share sent as atomic batches (as many writes as one holds, {@link #fits}), all
 * regions at once, and each write's outcome reported ({@link BatchResult}). A batch whose keys a
 * split has since put in two regions is grouped again on the newer map (at most {@link
 * #REGROUPS_MAX} times; then its writes are not applied).
 */
final class BatchWrites {
  /** How often a batch's writes are grouped again after a split before they are given up. */
  static final int REGROUPS_MAX = 8;

  private final ClientContext context;
  private final List<Mutation> mutations;
  private final BatchResult.Outcome[] outcomes;
  private final KvsException[] errors;
  private final CompletableFuture<BatchResult> result = new CompletableFuture<>();
  private final AtomicInteger pending = new AtomicInteger(1); // batches in flight, plus the start

  private BatchWrites(ClientContext context, List<Mutation> mutations) {
    this.context = context;
    this.mutations = mutations;
    this.outcomes = new BatchResult.Outcome[mutations.size()];
    this.errors = new KvsException[mutations.size()];
  }

  static CompletableFuture<BatchResult> start(ClientContext context, List<Mutation> mutations) {
    BatchWrites writes = new BatchWrites(context, mutations);
    List<Integer> all = new ArrayList<>();
    for (int i = 0; i < mutations.size(); i++) {
      all.add(i);
    }
    writes.send(all, 0);
    writes.finished();
    return writes.result;
  }

  /**
   * Whether a batch of {@code count} writes of {@code bytes} key and value bytes fits one BATCH.
   */
  static boolean fits(int count, long bytes) {
    return count <= WireCodec.BATCH_WRITES_MAX && bytes <= WireCodec.BATCH_BYTES_MAX;
  }

  static long bytes(Mutation mutation) {
    return mutation.key().length + (mutation.isDelete() ? 0 : (long) mutation.value().length);
  }

  /** Groups the writes at {@code indexes} by region on the current map and sends each group. */
  private void send(List<Integer> indexes, int regroups) {
    Map<Long, List<Integer>> byRegion = new LinkedHashMap<>();
    for (int index : indexes) {
      Optional<RegionDescriptor> region =
          context.metadata.current().regions().regionFor(mutations.get(index).key());
      // A key no region holds yet goes alone: its batch waits for the map (and is grouped again).
      long id = region.map(RegionDescriptor::id).orElse(-1L - index);
      byRegion.computeIfAbsent(id, r -> new ArrayList<>()).add(index);
    }
    for (List<Integer> group : byRegion.values()) {
      List<Integer> chunk = new ArrayList<>();
      long bytes = 0;
      for (int index : group) {
        long more = bytes(mutations.get(index));
        if (!chunk.isEmpty() && !fits(chunk.size() + 1, bytes + more)) {
          sendBatch(chunk, regroups);
          chunk = new ArrayList<>();
          bytes = 0;
        }
        chunk.add(index);
        bytes += more;
      }
      if (!chunk.isEmpty()) {
        sendBatch(chunk, regroups);
      }
    }
  }

  private void sendBatch(List<Integer> indexes, int regroups) {
    pending.incrementAndGet();
    List<Mutation> batch = indexes.stream().map(mutations::get).toList();
    CompletableFuture<Void> sent;
    try {
      sent = BatchOperation.start(context, batch, false);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete(
        (done, error) -> {
          try {
            if (error == null) {
              record(indexes, BatchResult.Outcome.APPLIED, null);
              return;
            }
            KvsException failure = Operation.unwrap(error);
            if (failure instanceof BatchOperation.SpansRegionsException
                && regroups < REGROUPS_MAX) {
              send(indexes, regroups + 1); // split meanwhile: group again on the newer map
            } else if (failure instanceof NotAppliedException
                || failure instanceof InvalidRequestException) {
              // Refused (too large, invalid, its keys in two regions too often), or a region
              // unavailable with every attempt refused: nothing of it was applied.
              record(indexes, BatchResult.Outcome.NOT_APPLIED, failure);
            } else {
              // Unknown, or a failure that does not prove otherwise (the client closed while it
              // was in flight).
              record(indexes, BatchResult.Outcome.UNKNOWN, failure);
            }
          } finally {
            finished();
          }
        });
  }

  private void record(List<Integer> indexes, BatchResult.Outcome outcome, KvsException error) {
    synchronized (this) {
      for (int index : indexes) {
        outcomes[index] = outcome;
        errors[index] = error;
      }
    }
  }

  private void finished() {
    if (pending.decrementAndGet() == 0) {
      synchronized (this) {
        result.complete(new BatchResult(outcomes.clone(), errors.clone()));
      }
    }
  }
}
