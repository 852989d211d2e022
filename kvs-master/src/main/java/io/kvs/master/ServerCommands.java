package io.kvs.master;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The master's commands to region servers ({@code open}, {@code close}), sent without waiting: each
 * server has a lane of its own, with at most {@link #IN_FLIGHT_PER_SERVER} commands in flight and
 * at most {@link #WAITING_PER_SERVER} waiting behind them, so a server that is slow to answer
 * (paused, replaying a long log, or just overloaded) delays only the commands sent to it. No thread
 * waits: a command is an exchange on one of the {@link ControlClient}'s connections to the server
 * (kept between commands), bounded by its timeout.
 *
 * <p>When the bounds are reached: a command finding its server's lane full is not sent, and fails
 * at once with {@code OVERLOADED}; one that waited in the lane longer than its own timeout, or that
 * its sender cancelled meanwhile (the region moved on), is dropped unsent. Either way the master
 * sends it again on a later pass if it is still wanted (passes are level-triggered). Thread-safe.
 */
final class ServerCommands {
  /**
   * Commands in flight to one server at most. A server runs its opens and closes in four lanes by
   * region (docs/PROTOCOL.md, "Control RPC"), so more would only queue there.
   */
  static final int IN_FLIGHT_PER_SERVER = 4;

  /**
   * Commands waiting for one server's lane at most: a pass sends at most one command per region to
   * a server at a time, so this is room for a pass over a thousand regions on one server.
   */
  static final int WAITING_PER_SERVER = 1024;

  private final ControlClient control;
  private final int inFlightPerServer;
  private final int waitingPerServer;
  private final Map<String, Lane> lanes = new HashMap<>(); // under this

  ServerCommands(ControlClient control) {
    this(control, IN_FLIGHT_PER_SERVER, WAITING_PER_SERVER);
  }

  ServerCommands(ControlClient control, int inFlightPerServer, int waitingPerServer) {
    this.control = control;
    this.inFlightPerServer = inFlightPerServer;
    this.waitingPerServer = waitingPerServer;
  }

  /**
   * Sends {@code command} to {@code server} when its lane has room: the future completes with the
   * reply, or exceptionally with a {@link KvsException} (unreachable, no reply within {@code
   * bound}, its lane full: OVERLOADED, or dropped unsent). Cancelling it drops it if it is still
   * waiting; one already sent runs its course (its connection is closed, not kept).
   */
  CompletableFuture<ControlReply> send(ServerInfo server, ControlCommand command, Duration bound) {
    Waiting waiting = new Waiting(server, command, bound, System.nanoTime());
    synchronized (this) {
      Lane lane = lanes.computeIfAbsent(server.id(), id -> new Lane());
      if (lane.inFlight >= inFlightPerServer) {
        if (lane.waiting.size() >= waitingPerServer) {
          return CompletableFuture.failedFuture(
              KvsException.of(
                  StatusCode.OVERLOADED,
                  "not sent: "
                      + waitingPerServer
                      + " commands already wait for "
                      + server.id()
                      + ", which answers slowly"));
        }
        lane.waiting.add(waiting);
        return waiting.reply;
      }
      lane.inFlight++;
    }
    start(waiting);
    return waiting.reply;
  }

  /** Commands in flight or waiting, over every server (tests, metrics). */
  synchronized int pending() {
    int pending = 0;
    for (Lane lane : lanes.values()) {
      pending += lane.inFlight + lane.waiting.size();
    }
    return pending;
  }

  private void start(Waiting command) {
    ServerInfo server = command.server;
    CompletableFuture<ControlReply> sent;
    try {
      sent = control.callAsync(server.host(), server.controlPort(), command.command, command.bound);
    } catch (RuntimeException e) { // the client is closed
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete(
        (reply, failure) -> {
          if (failure == null) {
            command.reply.complete(reply);
          } else {
            command.reply.completeExceptionally(failure);
          }
          next(server.id());
        });
  }

  /** A command to {@code serverId} ended: starts the next one still wanted. */
  private void next(String serverId) {
    while (true) {
      Waiting next;
      synchronized (this) {
        Lane lane = lanes.get(serverId);
        next = lane.waiting.poll();
        if (next == null) {
          if (--lane.inFlight == 0) {
            lanes.remove(serverId); // idle lanes go: the map holds busy servers only
          }
          return;
        }
      }
      if (next.reply.isDone()) {
        continue; // cancelled by its sender: the region moved on
      }
      long waited = System.nanoTime() - next.queuedAt;
      if (waited > next.bound.toNanos()) {
        next.reply.completeExceptionally(
            KvsException.of(
                StatusCode.IO_ERROR,
                "not sent: waited "
                    + waited / 1_000_000
                    + " ms behind slow commands to "
                    + serverId));
        continue;
      }
      start(next);
      return;
    }
  }

  private static final class Lane {
    int inFlight;
    final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  }

  private record Waiting(
      ServerInfo server,
      ControlCommand command,
      Duration bound,
      long queuedAt,
      CompletableFuture<ControlReply> reply) {
    Waiting(ServerInfo server, ControlCommand command, Duration bound, long queuedAt) {
      this(server, command, bound, queuedAt, new CompletableFuture<>());
    }
  }
}
