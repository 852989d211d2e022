package io.kvs.client;

import io.kvs.core.ClosedException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ServerInfo;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The client's connections: one per server, created on first use, shared by all threads. A
 * connection that broke or failed to connect is replaced on the next use; one to a server that
 * re-registered at another address is closed and replaced.
 */
final class Connections {
  private final ConnectionFactory factory;
  private final Executor blocking;
  private final Map<String, Slot> slots = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** A server's connection (possibly still connecting) and the address it was opened to. */
  private record Slot(String endpoint, CompletableFuture<Connection> connection) {}

  Connections(ConnectionFactory factory, Executor blocking) {
    this.factory = factory;
    this.blocking = blocking;
  }

  /** The connection to {@code server}, connecting if there is no usable one. */
  CompletableFuture<Connection> get(ServerInfo server) {
    String endpoint = factory.endpoint(server);
    if (endpoint == null) {
      return CompletableFuture.failedFuture(
          new KvsException(
              StatusCode.NOT_FOUND,
              "server " + server.id() + " does not serve this client's transport"));
    }
    while (true) {
      if (closed) {
        return CompletableFuture.failedFuture(new ClosedException("client is closed"));
      }
      Slot slot = slots.get(server.id());
      if (slot != null && slot.endpoint().equals(endpoint) && usable(slot.connection())) {
        return slot.connection();
      }
      Slot fresh = new Slot(endpoint, new CompletableFuture<>());
      boolean installed =
          slot == null
              ? slots.putIfAbsent(server.id(), fresh) == null
              : slots.replace(server.id(), slot, fresh);
      if (!installed) {
        continue; // another thread got there first
      }
      if (slot != null) {
        retire(slot.connection());
      }
      CompletableFuture<Connection> connecting;
      try {
        connecting = factory.connect(server);
      } catch (RuntimeException e) {
        connecting = CompletableFuture.failedFuture(e);
      }
      connecting.whenComplete(
          (connection, error) -> {
            if (error != null) {
              fresh.connection().completeExceptionally(error);
            } else if (closed) {
              closeQuietly(connection);
              fresh.connection().completeExceptionally(new ClosedException("client is closed"));
            } else {
              fresh.connection().complete(connection);
            }
          });
      if (closed) {
        fresh.connection().thenAccept(Connections::closeQuietly);
      }
      return fresh.connection();
    }
  }

  /** Forgets {@code connection} to {@code serverId} (it failed) and closes it. */
  void drop(String serverId, Connection connection) {
    slots.computeIfPresent(
        serverId,
        (id, slot) ->
            slot.connection().isDone()
                    && !slot.connection().isCompletedExceptionally()
                    && slot.connection().join() == connection
                ? null
                : slot);
    closeLater(connection);
  }

  /** Open connections (for tests). */
  int open() {
    int open = 0;
    for (Slot slot : slots.values()) {
      CompletableFuture<Connection> connection = slot.connection();
      if (connection.isDone()
          && !connection.isCompletedExceptionally()
          && connection.join().isOpen()) {
        open++;
      }
    }
    return open;
  }

  /** Closes every connection; later {@link #get} calls fail. */
  void close() {
    closed = true;
    for (Slot slot : slots.values()) {
      CompletableFuture<Connection> connection = slot.connection();
      if (connection.isDone() && !connection.isCompletedExceptionally()) {
        closeQuietly(connection.join());
      } else {
        connection.thenAccept(Connections::closeQuietly);
      }
    }
    slots.clear();
  }

  private static boolean usable(CompletableFuture<Connection> connection) {
    return !connection.isDone()
        || (!connection.isCompletedExceptionally() && connection.join().isOpen());
  }

  private void retire(CompletableFuture<Connection> connection) {
    connection.thenAccept(this::closeLater);
  }

  /** Closes off the caller's thread: closing a fabric connection waits for the server. */
  private void closeLater(Connection connection) {
    try {
      blocking.execute(() -> closeQuietly(connection));
    } catch (RejectedExecutionException e) {
      closeQuietly(connection); // the client is closing
    }
  }

  private static void closeQuietly(Connection connection) {
    try {
      connection.close();
    } catch (RuntimeException e) {
      // closing a broken connection may fail again; nothing to do about it
    }
  }
}
