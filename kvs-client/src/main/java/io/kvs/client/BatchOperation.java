package io.kvs.client;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.wire.BatchWrite;
import io.kvs.core.wire.Request;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * An atomic batch: writes whose keys lie in one region, sent as one BATCH request that the region's
 * primary applies all or nothing and replicates as one unit (docs/PROTOCOL.md). Routed by its first
 * key; retried as a put is (never sent again once it may have reached a primary). Keys that the map
 * puts in more than one region fail it with {@link SpansRegionsException}, nothing sent.
 */
final class BatchOperation extends Operation<Void> {
  private final List<Mutation> mutations;
  private final List<BatchWrite> writes;

  /** The keys of an atomic batch lie in more than one region: nothing was sent. */
  static final class SpansRegionsException extends NotAppliedException {
    private static final long serialVersionUID = 1L;

    SpansRegionsException(RegionDescriptor region, byte[] key) {
      super(
          StatusCode.INVALID_ARGUMENT,
          "atomic batch: its keys lie in more than one region (region "
              + region.id()
              + " holds its first key, not "
              + Problem.abbreviate(Keys.print(key))
              + "); an atomic batch must lie in one region; nothing was written");
    }
  }

  private BatchOperation(ClientContext context, List<Mutation> mutations) {
    super(context, "batch");
    this.mutations = mutations;
    this.writes =
        mutations.stream()
            .map(mutation -> new BatchWrite(mutation.key(), mutation.value()))
            .toList();
  }

  /** Applies {@code mutations} (at least one, within the batch limits) atomically. */
  static CompletableFuture<Void> start(
      ClientContext context, List<Mutation> mutations, boolean awaited) {
    return new BatchOperation(context, mutations).awaitedIf(awaited).start();
  }

  @Override
  boolean write() {
    return true;
  }

  @Override
  CompletableFuture<Step> round(Topology topology) {
    byte[] first = mutations.get(0).key();
    RegionDescriptor region = topology.regions().regionFor(first).orElse(null);
    if (region == null) {
      return CompletableFuture.completedFuture(
          Step.retry(Problem.noRegion(first, topology.regions().size()), false));
    }
    for (Mutation mutation : mutations) {
      if (!region.contains(mutation.key())) {
        throw new SpansRegionsException(region, mutation.key());
      }
    }
    Request request = Request.batch(0, region.id(), region.epoch(), writes);
    return exchangeForOk(topology, region, request, outcome -> Step.DONE);
  }

  @Override
  Void value() {
    return null;
  }
}
