package io.kvs.master.status;

import io.kvs.core.KvsException;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.control.HeldRegion;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * Asks region servers what they hold (control {@code list}) and their counters ({@code stats}), for
 * the status page and {@code ./kvs local status}; never hangs its caller on a slow or paused
 * server. Each server is asked by one call of each command at a time, each bounded by the probe's
 * call timeout; an answer is reused for {@code maxAge}; {@link #probeAll} waits for the answers at
 * most as long as it is told, and reports a server that has not answered by then as such (its probe
 * carries on, for the next caller). Bounded: {@link #THREADS} threads, at most {@link #QUEUE_LIMIT}
 * probes waiting for them (beyond that a server is reported as not asked), one remembered answer
 * per server asked for last.
 */
public final class ServerProbe implements AutoCloseable {
  /** Threads asking servers at once. */
  static final int THREADS = 4;

  /** Probes that may wait for a thread. */
  static final int QUEUE_LIMIT = 1024;

  /**
   * What one server answered.
   *
   * @param serverId the server
   * @param probedAtMillis when it was asked (milliseconds since the epoch)
   * @param held the regions it holds by id, null if it did not answer {@code list}
   * @param stats its counters (empty if it did not answer {@code stats})
   * @param error why it did not answer, empty if it did
   */
  public record Probe(
      String serverId,
      long probedAtMillis,
      Map<Long, HeldRegion> held,
      Map<String, Long> stats,
      String error) {
    /** Whether it listed what it holds. */
    public boolean answered() {
      return held != null;
    }
  }

  private record Asked(ServerInfo server, CompletableFuture<Probe> probe, long startedNanos) {}

  private final ControlClient control;
  private final Duration callTimeout;
  private final Duration maxAge;
  private final Clock clock;
  private final Map<String, Asked> asked = new ConcurrentHashMap<>();
  private final ThreadPoolExecutor threads =
      new ThreadPoolExecutor(
          THREADS,
          THREADS,
          0,
          TimeUnit.SECONDS,
          new ArrayBlockingQueue<>(QUEUE_LIMIT),
          runnable -> {
            Thread thread = new Thread(runnable, "kvs-status-probe");
            thread.setDaemon(true);
            return thread;
          });

  /**
   * @param control how to reach servers (not closed by this probe)
   * @param callTimeout bound on each control call to a server
   * @param maxAge how long an answer is reused (0: every call asks again)
   */
  public ServerProbe(ControlClient control, Duration callTimeout, Duration maxAge) {
    this(control, callTimeout, maxAge, Clock.systemUTC());
  }

  ServerProbe(ControlClient control, Duration callTimeout, Duration maxAge, Clock clock) {
    this.control = control;
    this.callTimeout = callTimeout;
    this.maxAge = maxAge;
    this.clock = clock;
  }

  /**
   * What each of {@code servers} answered, by id, waiting at most {@code wait} for answers not
   * already at hand; a server that did not answer in time has a probe with an error.
   */
  public Map<String, Probe> probeAll(Collection<ServerInfo> servers, Duration wait) {
    Set<String> ids = servers.stream().map(ServerInfo::id).collect(Collectors.toSet());
    asked.keySet().retainAll(ids);
    Map<String, CompletableFuture<Probe>> pending = new LinkedHashMap<>();
    for (ServerInfo server : servers) {
      pending.put(server.id(), askIfStale(server));
    }
    long deadline = System.nanoTime() + wait.toNanos();
    Map<String, Probe> probes = new HashMap<>();
    pending.forEach(
        (id, probe) -> {
          try {
            probes.put(
                id, probe.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
          } catch (TimeoutException e) {
            probes.put(id, failed(id, "no answer within " + wait.toMillis() + " ms"));
          } catch (ExecutionException e) {
            probes.put(id, failed(id, String.valueOf(e.getCause())));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            probes.put(id, failed(id, "interrupted"));
          }
        });
    return probes;
  }

  private CompletableFuture<Probe> askIfStale(ServerInfo server) {
    return asked
        .compute(
            server.id(),
            (id, previous) -> {
              if (previous != null
                  && previous.server().equals(server)
                  && (!previous.probe().isDone()
                      || System.nanoTime() - previous.startedNanos() < maxAge.toNanos())) {
                return previous;
              }
              return new Asked(server, ask(server), System.nanoTime());
            })
        .probe();
  }

  private CompletableFuture<Probe> ask(ServerInfo server) {
    try {
      return CompletableFuture.supplyAsync(() -> probe(server), threads);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.completedFuture(
          failed(server.id(), "not asked: too many probes waiting"));
    }
  }

  private Probe probe(ServerInfo server) {
    long probedAt = clock.millis();
    Map<Long, HeldRegion> held = new HashMap<>();
    try {
      ControlReply list =
          control.call(
              server.host(), server.controlPort(), new ControlCommand.ListRegions(), callTimeout);
      if (!list.isOk()) {
        return new Probe(
            server.id(), probedAt, null, Map.of(), list.status() + " " + list.message());
      }
      list.regions().forEach(region -> held.put(region.regionId(), region));
    } catch (KvsException e) {
      return new Probe(server.id(), probedAt, null, Map.of(), e.getMessage());
    }
    Map<String, Long> stats;
    try {
      ControlReply reply =
          control.call(
              server.host(), server.controlPort(), new ControlCommand.Stats(), callTimeout);
      stats = reply.isOk() ? reply.stats() : Map.of();
    } catch (KvsException e) {
      stats = Map.of(); // what it holds is what matters; counters are a bonus
    }
    return new Probe(server.id(), probedAt, Map.copyOf(held), stats, "");
  }

  private Probe failed(String serverId, String error) {
    return new Probe(serverId, clock.millis(), null, Map.of(), error);
  }

  @Override
  public void close() {
    threads.shutdownNow();
  }
}
