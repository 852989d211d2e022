package io.kvs.client;

import io.kvs.core.ClosedException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/** What a client's operations share: metadata, connections, threads, settings, open state. */
final class ClientContext {
  final MetadataCache metadata;
  final Connections connections;

  /** Runs operations' continuations, off the transports' and ZooKeeper's threads. */
  final Executor callbacks;

  /** Backoff delays. */
  final ScheduledExecutorService timer;

  final Duration operationTimeout;

  /** The application's meters, or {@link ClientMetrics#NONE}. */
  final ClientMetrics metrics;

  /** The ids of this client's conditional writes, and the floors their retries carry. */
  final ConditionalWriteIds writeIds = new ConditionalWriteIds();

  private final Set<CompletableFuture<?>> outstanding = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  ClientContext(
      MetadataCache metadata,
      Connections connections,
      Executor callbacks,
      ScheduledExecutorService timer,
      Duration operationTimeout,
      ClientMetrics metrics) {
    this.metadata = metadata;
    this.metrics = metrics;
    this.connections = connections;
    this.callbacks = callbacks;
    this.timer = timer;
    this.operationTimeout = operationTimeout;
  }

  boolean isClosed() {
    return closed;
  }

  /** Tracks an operation's future until it completes, so that {@link #close} can fail it. */
  <T> void track(CompletableFuture<T> operation) {
    outstanding.add(operation);
    operation.whenComplete((value, error) -> outstanding.remove(operation));
    if (closed) {
      operation.completeExceptionally(closedError());
    }
  }

  /** Marks the client closed and fails every outstanding operation. */
  void close() {
    closed = true;
    for (CompletableFuture<?> operation : outstanding) {
      operation.completeExceptionally(closedError());
    }
  }

  static ClosedException closedError() {
    return new ClosedException("the KVS client is closed");
  }
}
