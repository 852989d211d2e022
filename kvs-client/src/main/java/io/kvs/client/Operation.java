package io.kvs.client;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * One client operation: rounds of requests routed by the current {@link Topology}, with retries.
 *
 * <p>A round that does not get through (the server is not the region's primary, does not hold the
 * region, has another epoch, is shutting down, is overloaded or cannot be reached; or the map has
 * no usable primary for the key) is retried: the region's znode is re-read at once, and the next
 * round starts as soon as the map changes, or after a backoff (5 ms doubling to 500 ms, jittered;
 * at most 25 ms while a server the map names refuses a region the map shows opening; back to 5 ms
 * once the map changed the region). The operation fails with a {@link RegionUnavailableException}
 * once it has made no progress for the operation timeout. No retry is sent with less of it left
 * than a retry needs (a quarter of it, at most {@link #RETRY_TIME_NANOS}); the operation waits out
 * its timeout instead: a retry sent with a sliver of time would time out although its server
 * answers in time, and a write that timed out has an unknown outcome, where every earlier answer
 * proved it not applied. Any other error status fails it at once. A request whose region the map
 * moves to another primary before it is answered stops waiting for the old one (see {@code
 * unlessMoved}).
 *
 * @param <T> the result
 */
abstract class Operation<T> {
  final ClientContext context;
  final String name;

  /** How long a write waits for a primary the map no longer names before it gives up on it. */
  static final long MOVED_WRITE_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** The time left a retry needs: this, or a quarter of the operation timeout if less. */
  static final long RETRY_TIME_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final CompletableFuture<T> result = new CompletableFuture<>();
  private final Backoff backoff = new Backoff();
  private final long timeoutNanos;
  private final long minAttemptNanos; // a retry is sent only with this much time left
  private volatile long deadline;
  private volatile Problem lastProblem; // since the last progress
  private boolean awaited; // only the blocking caller waits for the result (awaitedIf)
  private Thread caller; // the blocking caller if awaited, else null

  /** What came back from sending one request: a reply to act on, or a problem to retry. */
  record Outcome(Reply reply, Problem problem, String serverId) {}

  Operation(ClientContext context, String name) {
    this.context = context;
    this.name = name;
    this.timeoutNanos = context.operationTimeout.toNanos();
    this.minAttemptNanos = Math.min(RETRY_TIME_NANOS, timeoutNanos / 4);
  }

  /** Runs one round against {@code topology}; fails only with a final error. */
  abstract CompletableFuture<Step> round(Topology topology);

  /** The result, once a round returned {@link Step#DONE}. */
  abstract T value();

  /**
   * Marks the result as awaited by the blocking caller only (the blocking API, which never hands
   * the future out): a round that completes the operation then completes it on the thread that took
   * the reply (the connection's I/O thread), which only wakes the caller; with the future in an
   * application's hands, its callbacks could block that thread, so the result is completed from the
   * client's callback pool. A request this thread sends itself (the first round, unless it had to
   * wait for a connection) is one it waits for itself ({@link Connection#send(Request, long,
   * boolean)}). Before {@link #start}.
   */
  final Operation<T> awaitedIf(boolean awaitedByCaller) {
    awaited = awaitedByCaller;
    return this;
  }

  /** Starts the operation. */
  final CompletableFuture<T> start() {
    context.track(result);
    long begun = context.metrics.begin();
    if (begun != 0) {
      result.whenComplete((value, error) -> context.metrics.completed(name, begun, error));
    }
    deadline = System.nanoTime() + timeoutNanos;
    if (awaited) {
      caller = Thread.currentThread();
    }
    next();
    return result;
  }

  private void next() {
    if (result.isDone()) {
      return;
    }
    if (context.isClosed()) {
      result.completeExceptionally(ClientContext.closedError());
      return;
    }
    Problem last = lastProblem;
    if (last != null && System.nanoTime() - deadline >= 0) {
      // Out of time after a backoff: report why the last attempt failed, not that no time was left.
      result.completeExceptionally(last.timedOut(name, context.operationTimeout));
      return;
    }
    Topology topology = context.metadata.current();
    CompletableFuture<Step> step;
    try {
      step = round(topology);
    } catch (RuntimeException e) {
      step = CompletableFuture.failedFuture(e);
    }
    step.whenComplete(
        (done, error) -> {
          if (awaited && error == null && done.kind() == Step.Kind.DONE) {
            // The common case costs no hand-off to the callback pool: one fewer thread to wake
            // per operation (docs/BENCHMARKS.md, one YCSB thread).
            after(topology, done, null);
            return;
          }
          try {
            context.callbacks.execute(() -> after(topology, done, error));
          } catch (RejectedExecutionException e) {
            result.completeExceptionally(
                ClientContext.closedError()); // the client's threads are gone
          }
        });
  }

  private void after(Topology seen, Step step, Throwable error) {
    try {
      if (error != null) {
        result.completeExceptionally(unwrap(error));
        return;
      }
      if (step.progressed()) {
        deadline = System.nanoTime() + timeoutNanos;
        backoff.reset();
        lastProblem = null;
      }
      switch (step.kind()) {
        case DONE -> result.complete(value());
        case CONTINUE -> next();
        case RETRY -> retry(seen, step.problem());
      }
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
    }
  }

  private void retry(Topology seen, Problem problem) {
    lastProblem = problem;
    context.metrics.retried(name, problem.action());
    if (context.isClosed()) {
      result.completeExceptionally(ClientContext.closedError());
      return;
    }
    long remaining = deadline - System.nanoTime();
    if (remaining <= 0) {
      result.completeExceptionally(problem.timedOut(name, context.operationTimeout));
      return;
    }
    // With less left than a retry needs, none is sent: the operation fails at its timeout.
    boolean last = remaining <= minAttemptNanos;
    if (!last && problem.regionId() >= 0 && problem.action() != Problem.Action.BACK_OFF) {
      context.metadata.refreshRegion(problem.regionId());
    }
    if (!last && problem.regionId() < 0 && problem.action() == Problem.Action.REFRESH) {
      context.metadata.refreshRegions(); // a hole in the map: the regions that fill it, read now
    }
    if (!last && problem.action() == Problem.Action.RECONNECT && !problem.serverId().isEmpty()) {
      context.metadata.refreshServer(problem.serverId());
    }
    CompletableFuture<Void> wake = new CompletableFuture<>();
    if (!last && problem.action() != Problem.Action.BACK_OFF) {
      context.metadata.wakeOnChange(seen.version(), wake);
    }
    ScheduledFuture<?> timer;
    try {
      timer =
          context.timer.schedule(
              () -> wake.complete(null),
              last
                  ? remaining
                  : Math.min(
                      backoff.nextNanos(
                          opening(seen, problem) ? Backoff.OPENING_MAX_NANOS : Backoff.MAX_NANOS),
                      remaining - minAttemptNanos),
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(ClientContext.closedError());
      return;
    }
    try {
      wake.whenCompleteAsync(
          (v, e) -> {
            timer.cancel(false);
            context.metadata.forget(wake);
            if (last) {
              result.completeExceptionally(problem.timedOut(name, context.operationTimeout));
              return;
            }
            if (regionChanged(seen, context.metadata.current(), problem.regionId())) {
              // News of the region (a split committed, a daughter opened, a primary promoted):
              // the next rounds start from the shortest delay again, not the one the old map's
              // refusals grew.
              backoff.reset();
            }
            next();
          },
          context.callbacks);
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(ClientContext.closedError());
    }
  }

  /**
   * Whether {@code problem} is a server the map names refusing a region the map shows being opened
   * (a split's daughter, a promoted backup): it serves it within tens of milliseconds.
   */
  private static boolean opening(Topology seen, Problem problem) {
    return problem.action() == Problem.Action.REFRESH
        && !problem.serverId().isEmpty()
        && seen.regions()
            .byId(problem.regionId())
            .map(region -> region.state() == RegionState.OPENING)
            .orElse(false);
  }

  /** Whether {@code now} maps region {@code regionId} (-1: any) otherwise than {@code seen}. */
  private static boolean regionChanged(Topology seen, Topology now, long regionId) {
    if (now.version() == seen.version()) {
      return false;
    }
    return regionId < 0 || !seen.regions().byId(regionId).equals(now.regions().byId(regionId));
  }

  /** The time left before the operation times out, at least 1 ns. */
  final long remainingNanos() {
    return Math.max(1, deadline - System.nanoTime());
  }

  /**
   * Sends {@code request} to the primary of {@code region}; a problem if the map names no live
   * primary, the connection fails, or the server redirects or sheds the request.
   */
  final CompletableFuture<Outcome> exchange(
      Topology topology, RegionDescriptor region, Request request) {
    String primary = region.primary();
    if (primary.isEmpty()) {
      return problem(
          StatusCode.NOT_PRIMARY,
          region,
          "",
          "it has no primary (state " + region.state() + ")",
          Problem.Action.REFRESH);
    }
    ServerInfo server = topology.servers().get(primary);
    if (server == null) {
      return problem(
          StatusCode.NOT_PRIMARY,
          region,
          primary,
          "its primary " + primary + " is not a live server",
          Problem.Action.RECONNECT);
    }
    AtomicBoolean connected = new AtomicBoolean();
    return context
        .connections
        .get(server)
        .copy()
        .orTimeout(remainingNanos(), TimeUnit.NANOSECONDS)
        .thenCompose(
            connection -> {
              connected.set(true);
              return unlessMoved(
                  region.id(),
                  primary,
                  connection
                      .send(request, remainingNanos(), Thread.currentThread() == caller)
                      .whenComplete(
                          (reply, error) -> {
                            if (error != null && !connection.isOpen()) {
                              context.connections.drop(server.id(), connection);
                            }
                          }));
            })
        .handle((reply, error) -> outcome(region, server, connected.get(), reply, error));
  }

  /**
   * Sends {@code request} as {@link #exchange} does, and hands an OK reply to {@code onOk}: a
   * problem is a retry, any other status the final {@link #failure}.
   */
  final CompletableFuture<Step> exchangeForOk(
      Topology topology, RegionDescriptor region, Request request, Function<Outcome, Step> onOk) {
    return exchange(topology, region, request)
        .thenApply(
            outcome -> {
              if (outcome.problem() != null) {
                return Step.retry(outcome.problem(), false);
              }
              Reply reply = outcome.reply();
              if (reply.status() != StatusCode.OK) {
                throw failure(reply, region, outcome.serverId());
              }
              return onOk.apply(outcome);
            });
  }

  /**
   * {@code reply}, unless the map names another primary for region {@code regionId} before it
   * arrives: then a read stops waiting for {@code primary} at once (the round is retried on the new
   * map), and a write once it has waited {@link #MOVED_WRITE_PATIENCE_NANOS} (it ends with its
   * outcome unknown, as it would at the timeout). A primary that was paused or cut off answers
   * nothing until it learns it lost the region; without this, whoever asked it waits out the
   * operation timeout although the region serves elsewhere. A write's patience lets a primary
   * handed over in order (a planned move) answer what it took before it went.
   */
  private CompletableFuture<Reply> unlessMoved(
      long regionId, String primary, CompletableFuture<Reply> reply) {
    long sent = System.nanoTime();
    MetadataCache.MoveWatch watch = context.metadata.watchMove(regionId, primary);
    CompletableFuture<Reply> raced = new CompletableFuture<>();
    reply.whenComplete(
        (answer, error) -> {
          context.metadata.forgetMove(watch);
          if (error != null) {
            raced.completeExceptionally(error);
          } else {
            raced.complete(answer);
          }
        });
    watch.moved.thenAcceptAsync(
        now -> {
          RegionMovedException moved = new RegionMovedException(regionId, primary, now);
          long wait = write() ? sent + MOVED_WRITE_PATIENCE_NANOS - System.nanoTime() : 0;
          if (wait <= 0) {
            raced.completeExceptionally(moved);
            return;
          }
          try {
            context.timer.schedule(
                () -> raced.completeExceptionally(moved), wait, TimeUnit.NANOSECONDS);
          } catch (RejectedExecutionException e) {
            raced.completeExceptionally(ClientContext.closedError());
          }
        },
        context.callbacks);
    return raced;
  }

  /** The map named another primary for a region while a request to its old one was unanswered. */
  static final class RegionMovedException extends KvsException {
    private static final long serialVersionUID = 1L;

    RegionMovedException(long regionId, String from, String to) {
      super(
          StatusCode.NOT_PRIMARY,
          "region "
              + regionId
              + " moved from server "
              + from
              + (to.isEmpty() ? " (no primary yet)" : " to server " + to)
              + " while "
              + from
              + " had not answered");
    }
  }

  /**
   * Whether this operation changes data: once such a request may have reached a primary, a failure
   * whose cause does not prove it was refused is final ({@link OutcomeUnknownException}), never
   * retried (a retry could apply it twice, out of order with a later write).
   */
  boolean write() {
    return false;
  }

  /**
   * For a write whose outcome a failure left unknown: whether to send it again rather than fail
   * with {@link OutcomeUnknownException} -- a conditional write under its write id, which the
   * region applies at most once (called when that happens: the next attempt is a retry).
   */
  boolean resendsUnknownOutcome() {
    return false;
  }

  private Outcome outcome(
      RegionDescriptor region, ServerInfo server, boolean connected, Reply reply, Throwable error) {
    if (error != null) {
      Throwable cause = unwrapRaw(error);
      boolean refusedBeforeSending =
          cause instanceof InvalidRequestException
              || cause instanceof UnsentRequestException
              || (cause instanceof KvsException kvs && kvs.status() == StatusCode.OVERLOADED);
      if (write() && connected && !refusedBeforeSending) {
        if (resendsUnknownOutcome()) {
          return problemOutcome(
              StatusCode.IO_ERROR,
              region,
              server.id(),
              name
                  + ": sent to server "
                  + server.id()
                  + ", then "
                  + (cause instanceof TimeoutException ? "no reply in time" : cause.getMessage())
                  + "; sent again under its write id",
              cause instanceof RegionMovedException
                  ? Problem.Action.REFRESH
                  : Problem.Action.RECONNECT);
        }
        throw new OutcomeUnknownException(
            StatusCode.IO_ERROR,
            region.id(),
            name
                + ": sent to server "
                + server.id()
                + " for region "
                + region.id()
                + ", then "
                + (cause instanceof TimeoutException
                    ? "no reply within the operation timeout"
                    : cause instanceof RegionMovedException
                        ? cause.getMessage()
                        : "the connection failed: " + cause.getMessage())
                + "; it may or may not have been applied");
      }
      if (cause instanceof RegionMovedException) {
        return problemOutcome(
            StatusCode.NOT_PRIMARY,
            region,
            server.id(),
            cause.getMessage(),
            Problem.Action.REFRESH);
      }
      if (cause instanceof TimeoutException) {
        return problemOutcome(
            StatusCode.IO_ERROR,
            region,
            server.id(),
            connected
                ? "no reply from server " + server.id() + " within the operation timeout"
                : "cannot reach server "
                    + server.id()
                    + " ("
                    + server.host()
                    + "): no connection within the operation timeout",
            Problem.Action.RECONNECT);
      }
      if (cause instanceof KvsException kvs && kvs.status() == StatusCode.OVERLOADED) {
        return problemOutcome(
            StatusCode.OVERLOADED,
            region,
            server.id(),
            "server " + server.id() + ": " + kvs.getMessage(),
            Problem.Action.BACK_OFF);
      }
      if (cause instanceof InvalidRequestException invalid) {
        throw invalid; // the transport cannot carry this request: retrying will not help
      }
      return problemOutcome(
          StatusCode.IO_ERROR,
          region,
          server.id(),
          "cannot reach server " + server.id() + " (" + server.host() + "): " + cause.getMessage(),
          Problem.Action.RECONNECT);
    }
    StatusCode status = reply.status();
    switch (status) {
      case NOT_PRIMARY, WRONG_REGION, STALE_EPOCH, CLOSED:
        return problemOutcome(
            status,
            region,
            server.id(),
            status + " from server " + server.id() + describe(reply),
            Problem.Action.REFRESH);
      case BUSY, OVERLOADED, NOT_ENOUGH_REPLICAS:
        return problemOutcome(
            status,
            region,
            server.id(),
            status + " from server " + server.id() + describe(reply),
            Problem.Action.BACK_OFF);
      default:
        return new Outcome(reply, null, server.id());
    }
  }

  private static String describe(Reply reply) {
    return reply.message().isEmpty() ? "" : " (" + reply.message() + ")";
  }

  private CompletableFuture<Outcome> problem(
      StatusCode status,
      RegionDescriptor region,
      String serverId,
      String reason,
      Problem.Action action) {
    return CompletableFuture.completedFuture(
        problemOutcome(status, region, serverId, reason, action));
  }

  private static Outcome problemOutcome(
      StatusCode status,
      RegionDescriptor region,
      String serverId,
      String reason,
      Problem.Action action) {
    return new Outcome(null, new Problem(status, region.id(), serverId, reason, action), serverId);
  }

  /**
   * The final error for a reply with an error status that retrying cannot fix. For a write, only a
   * refusal of the request itself (TOO_LARGE, INVALID_ARGUMENT) proves it was not applied; any
   * other error (IO_ERROR above all: the primary may have applied it and then failed to replicate
   * it) leaves its outcome unknown.
   */
  final KvsException failure(Reply reply, RegionDescriptor region, String serverId) {
    StatusCode status = reply.status();
    if (write() && status != StatusCode.TOO_LARGE && status != StatusCode.INVALID_ARGUMENT) {
      return new OutcomeUnknownException(
          status,
          region.id(),
          name
              + ": "
              + status
              + " from server "
              + serverId
              + " for region "
              + region.id()
              + describe(reply)
              + "; it may or may not have been applied");
    }
    return KvsException.of(
        reply.status(),
        name
            + ": "
            + reply.status()
            + " from server "
            + serverId
            + " for region "
            + region.id()
            + describe(reply));
  }

  private static Throwable unwrapRaw(Throwable error) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /** The KvsException behind {@code error}; anything else wrapped in one (INTERNAL). */
  static KvsException unwrap(Throwable error) {
    Throwable cause = unwrapRaw(error);
    if (cause instanceof KvsException kvs) {
      return kvs;
    }
    return new KvsException(StatusCode.INTERNAL, "unexpected client error: " + cause, cause);
  }
}
