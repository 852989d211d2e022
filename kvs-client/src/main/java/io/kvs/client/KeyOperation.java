package io.kvs.client;

import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WriteId;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * An operation on one key (put, get, delete, compare-and-set, increment): one request to the region
 * holding it.
 */
final class KeyOperation<T> extends Operation<T> {
  /** Builds the request for a region id and epoch. */
  interface RequestFactory {
    Request create(long regionId, long epoch);
  }

  private static final Set<StatusCode> OK = EnumSet.of(StatusCode.OK);

  /**
   * How a region's refusal of a retry begins when it cannot tell whether it applied the first
   * attempt (docs/PROTOCOL.md): final, the outcome unknown.
   */
  static final String UNDECIDABLE = "retry undecidable: ";

  private static final Set<StatusCode> OK_OR_NOT_FOUND =
      EnumSet.of(StatusCode.OK, StatusCode.NOT_FOUND);

  private final byte[] key;
  private final RequestFactory requests;
  private final Set<StatusCode> accepted;
  private final Function<Reply, T> reader;
  private final boolean write;
  // A conditional write's id (NONE: none), the floor its retries carry (taken at its first
  // attempt), and whether an attempt may have reached a primary (the next one is a retry).
  private final WriteId writeId;
  private volatile long floor = -1;
  private volatile boolean resent;
  private volatile T value;

  private KeyOperation(
      ClientContext context,
      String name,
      byte[] key,
      RequestFactory requests,
      Set<StatusCode> accepted,
      Function<Reply, T> reader,
      boolean write,
      WriteId writeId) {
    super(context, name);
    this.key = key;
    this.requests = requests;
    this.accepted = accepted;
    this.reader = reader;
    this.write = write;
    this.writeId = writeId;
  }

  private KeyOperation(
      ClientContext context,
      String name,
      byte[] key,
      RequestFactory requests,
      Set<StatusCode> accepted,
      Function<Reply, T> reader,
      boolean write) {
    this(context, name, key, requests, accepted, reader, write, WriteId.NONE);
  }

  @Override
  boolean write() {
    return write;
  }

  @Override
  boolean resendsUnknownOutcome() {
    if (!writeId.present()) {
      return false;
    }
    resent = true;
    return true;
  }

  static CompletableFuture<Void> put(
      ClientContext context, byte[] key, byte[] value, boolean awaited) {
    return new KeyOperation<Void>(
            context,
            "put",
            key,
            (region, epoch) -> Request.put(0, region, epoch, key, value),
            OK,
            reply -> null,
            true)
        .awaitedIf(awaited)
        .start();
  }

  static CompletableFuture<Optional<byte[]>> get(
      ClientContext context, byte[] key, boolean awaited) {
    return new KeyOperation<Optional<byte[]>>(
            context,
            "get",
            key,
            (region, epoch) -> Request.get(0, region, epoch, key),
            OK_OR_NOT_FOUND,
            reply ->
                reply.status() == StatusCode.OK
                    ? Optional.of(reply.value())
                    : Optional.<byte[]>empty(),
            false)
        .awaitedIf(awaited)
        .start();
  }

  /** Deleting a key that has no value succeeds. */
  static CompletableFuture<Void> delete(ClientContext context, byte[] key, boolean awaited) {
    return new KeyOperation<Void>(
            context,
            "delete",
            key,
            (region, epoch) -> Request.delete(0, region, epoch, key),
            OK_OR_NOT_FOUND,
            reply -> null,
            true)
        .awaitedIf(awaited)
        .start();
  }

  /**
   * Writes {@code value} (null: deletes the key) if the key holds {@code expected} (null: none),
   * decided and written by the primary in its region's write order. Sent again under its write id
   * when a failure leaves its outcome unknown (the region applies it at most once); {@link
   * OutcomeUnknownException} when the region cannot tell whether it applied the first attempt.
   */
  static CompletableFuture<CasResult> compareAndSet(
      ClientContext context, byte[] key, byte[] expected, byte[] value, boolean awaited) {
    return new KeyOperation<CasResult>(
            context,
            value == null ? "delete-if-equals" : "compare-and-set",
            key,
            (region, epoch) -> Request.compareAndSet(0, region, epoch, key, expected, value),
            OK,
            reply -> reply.applied() ? CasResult.applied() : CasResult.notApplied(reply.current()),
            true,
            context.writeIds.next())
        .awaitedIf(awaited)
        .start();
  }

  /** Adds {@code delta} to the key's 8-byte counter; the sum. Retried as a compare-and-set is. */
  static CompletableFuture<Long> increment(
      ClientContext context, byte[] key, long delta, boolean awaited) {
    return new KeyOperation<Long>(
            context,
            "increment",
            key,
            (region, epoch) -> Request.increment(0, region, epoch, key, delta),
            OK,
            Reply::counter,
            true,
            context.writeIds.next())
        .awaitedIf(awaited)
        .start();
  }

  @Override
  CompletableFuture<Step> round(Topology topology) {
    RegionDescriptor region = topology.regions().regionFor(key).orElse(null);
    if (region == null) {
      return CompletableFuture.completedFuture(
          Step.retry(Problem.noRegion(key, topology.regions().size()), false));
    }
    Request request = requests.create(region.id(), region.epoch());
    if (writeId.present()) {
      if (floor < 0) {
        floor = context.writeIds.floor(region.id());
      }
      request = request.withWriteId(resent ? writeId.asRetry(floor) : writeId);
    }
    return exchange(topology, region, request)
        .thenApply(
            outcome -> {
              if (outcome.problem() != null) {
                return Step.retry(outcome.problem(), false);
              }
              Reply reply = outcome.reply();
              if (writeId.present() && reply.status() == StatusCode.OK) {
                context.writeIds.observed(region.id(), reply.lsn());
              }
              if (!accepted.contains(reply.status())) {
                if (writeId.present()
                    && reply.status() == StatusCode.IO_ERROR
                    && !reply.message().startsWith(UNDECIDABLE)) {
                  // Applied or not: the next attempt, under the same id, finds out.
                  resent = true;
                  return Step.retry(
                      new Problem(
                          reply.status(),
                          region.id(),
                          outcome.serverId(),
                          name + ": " + reply.message() + "; sent again under its write id",
                          Problem.Action.BACK_OFF),
                      false);
                }
                throw failure(reply, region, outcome.serverId());
              }
              value = reader.apply(reply);
              return Step.DONE;
            });
  }

  @Override
  T value() {
    return value;
  }
}
