package io.kvs.client;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Gets many keys: each round splits the keys not answered yet by region and sends one request per
 * region (of at most 1,024 keys), all at once. A server may answer only the first keys of a
 * request; the rest go in the next round, as do the keys of regions that must be retried.
 */
final class MultiGetOperation extends Operation<List<Optional<byte[]>>> {
  private final List<byte[]> keys;
  // Written only between rounds (by the thread processing a round's replies).
  private final Optional<byte[]>[] values;
  private int answered;

  /** The requests of one region in one round, and what came back. */
  private record Batch(RegionDescriptor region, int[] indexes, Outcome outcome) {}

  @SuppressWarnings("unchecked")
  private MultiGetOperation(ClientContext context, List<byte[]> keys) {
    super(context, "multi-get");
    this.keys = keys;
    this.values = (Optional<byte[]>[]) new Optional<?>[keys.size()];
  }

  static CompletableFuture<List<Optional<byte[]>>> start(ClientContext context, List<byte[]> keys) {
    return new MultiGetOperation(context, keys).start();
  }

  @Override
  CompletableFuture<Step> round(Topology topology) {
    if (answered == keys.size()) {
      return CompletableFuture.completedFuture(Step.DONE);
    }
    Map<RegionDescriptor, List<Integer>> byRegion = new LinkedHashMap<>();
    Problem unrouted = null;
    for (int i = 0; i < keys.size(); i++) {
      if (values[i] != null) {
        continue;
      }
      RegionDescriptor region = topology.regions().regionFor(keys.get(i)).orElse(null);
      if (region == null) {
        unrouted = Problem.noRegion(keys.get(i), topology.regions().size());
      } else {
        byRegion.computeIfAbsent(region, r -> new ArrayList<>()).add(i);
      }
    }
    List<CompletableFuture<Batch>> batches = new ArrayList<>();
    for (Map.Entry<RegionDescriptor, List<Integer>> entry : byRegion.entrySet()) {
      RegionDescriptor region = entry.getKey();
      List<Integer> indexes = entry.getValue();
      for (int from = 0; from < indexes.size(); from += WireCodec.MULTI_GET_KEYS_MAX) {
        int[] chunk =
            indexes
                .subList(from, Math.min(indexes.size(), from + WireCodec.MULTI_GET_KEYS_MAX))
                .stream()
                .mapToInt(Integer::intValue)
                .toArray();
        List<byte[]> chunkKeys = Arrays.stream(chunk).mapToObj(keys::get).toList();
        Request request = Request.multiGet(0, region.id(), region.epoch(), chunkKeys);
        batches.add(
            exchange(topology, region, request)
                .thenApply(outcome -> new Batch(region, chunk, outcome)));
      }
    }
    Problem firstProblem = unrouted;
    return CompletableFuture.allOf(batches.toArray(CompletableFuture<?>[]::new))
        .thenApply(all -> collect(batches, firstProblem));
  }

  /** Records the values that came back; one step for the whole round. */
  private Step collect(List<CompletableFuture<Batch>> batches, Problem unrouted) {
    Problem problem = unrouted;
    boolean progressed = false;
    for (CompletableFuture<Batch> future : batches) {
      Batch batch = future.join();
      Outcome outcome = batch.outcome();
      if (outcome.problem() != null) {
        problem = problem == null ? outcome.problem() : problem;
        continue;
      }
      Reply reply = outcome.reply();
      if (reply.status() != StatusCode.OK) {
        throw failure(reply, batch.region(), outcome.serverId());
      }
      List<byte[]> got = reply.values();
      int count = Math.min(got.size(), batch.indexes().length);
      for (int j = 0; j < count; j++) {
        values[batch.indexes()[j]] = Optional.ofNullable(got.get(j));
      }
      answered += count;
      progressed |= count > 0;
      if (count == 0 && problem == null) {
        problem =
            new Problem(
                StatusCode.BUSY,
                batch.region().id(),
                outcome.serverId(),
                "server " + outcome.serverId() + " answered none of the keys",
                Problem.Action.BACK_OFF);
      }
    }
    if (problem != null) {
      return Step.retry(problem, progressed);
    }
    return answered == keys.size() ? Step.DONE : Step.CONTINUE;
  }

  @Override
  List<Optional<byte[]>> value() {
    return List.of(values);
  }
}
