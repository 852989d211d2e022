package io.kvs.client;

import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One pipelined connection to one region server over one transport, shared by every thread of a
 * client. Implementations replace the request id with their own.
 */
interface Connection {
  /**
   * Sends {@code request}; the future completes with its reply, or fails if the connection broke
   * (after which {@link #isOpen()} is false) or the transport refused the request. Futures may
   * complete on the transport's own thread: chain with the {@code *Async} variants.
   */
  CompletableFuture<Reply> send(Request request);

  /**
   * {@link #send}, and the future fails with a {@link java.util.concurrent.TimeoutException} if no
   * reply came within {@code timeoutNanos}.
   */
  default CompletableFuture<Reply> send(Request request, long timeoutNanos) {
    return send(request).orTimeout(timeoutNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * {@link #send(Request, long)} from a blocking call's thread that will wait for the reply itself
   * ({@code callerWaits}): a transport without an I/O thread of its own ({@link DirectConnection})
   * lets that thread read the reply; the others ignore the flag.
   */
  default CompletableFuture<Reply> send(Request request, long timeoutNanos, boolean callerWaits) {
    return send(request, timeoutNanos);
  }

  /** Whether requests can still be sent. */
  boolean isOpen();

  /** Closes the connection; outstanding requests fail. Idempotent. */
  void close();
}
