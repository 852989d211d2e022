package io.kvs.client;

import io.kvs.core.ClosedException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A pipelined Netty TCP connection: requests are written as they come, replies matched by request
 * id. When the channel closes, every outstanding request fails.
 */
final class NettyConnection implements Connection {
  private final Channel channel;
  private final Handler handler;
  private final AtomicLong nextId = new AtomicLong(1);

  NettyConnection(Channel channel, Handler handler) {
    this.channel = channel;
    this.handler = handler;
  }

  @Override
  public CompletableFuture<Reply> send(Request request) {
    return send(request, 0);
  }

  /**
   * Writes the request from the connection's event loop, and times it out there (none if {@code
   * timeoutNanos} is 0): a write from another thread is a task the loop is woken for anyway, and
   * the timeout is scheduled in the same task, then cancelled where the reply arrives, so it costs
   * no wake of its own. (The JDK's {@code orTimeout} keeps a thread of its own, woken at each
   * cancelled timeout's deadline: about one wake per request; docs/BENCHMARKS.md.)
   */
  @Override
  public CompletableFuture<Reply> send(Request request, long timeoutNanos) {
    long id = nextId.getAndIncrement();
    CompletableFuture<Reply> future = new CompletableFuture<>();
    handler.pending.put(id, future);
    future.whenComplete((reply, error) -> handler.pending.remove(id));
    if (!channel.isActive()) {
      KvsException closed = handler.closedError();
      future.completeExceptionally(new UnsentRequestException(closed.getMessage(), closed));
      return future;
    }
    EventLoop loop = channel.eventLoop();
    Runnable write =
        () -> {
          if (future.isDone()) {
            return;
          }
          if (timeoutNanos > 0) {
            ScheduledFuture<?> timeout =
                loop.schedule(
                    () -> future.completeExceptionally(new TimeoutException()),
                    timeoutNanos,
                    TimeUnit.NANOSECONDS);
            future.whenComplete((reply, error) -> timeout.cancel(false));
          }
          channel
              .writeAndFlush(request.withRequestId(id))
              .addListener(
                  written -> {
                    if (!written.isSuccess()) {
                      // Not written whole: the server cannot decode, so cannot apply, a cut frame.
                      future.completeExceptionally(
                          new UnsentRequestException(
                              "sending to "
                                  + channel.remoteAddress()
                                  + " failed: "
                                  + written.cause(),
                              written.cause()));
                    }
                  });
        };
    if (loop.inEventLoop()) {
      write.run();
      return future;
    }
    try {
      loop.execute(write);
    } catch (RejectedExecutionException e) {
      KvsException closed = handler.closedError();
      future.completeExceptionally(new UnsentRequestException(closed.getMessage(), closed));
    }
    return future;
  }

  @Override
  public boolean isOpen() {
    return channel.isActive();
  }

  @Override
  public void close() {
    channel.close();
  }

  /** Completes replies; fails everything outstanding when the channel goes. */
  static final class Handler extends SimpleChannelInboundHandler<Reply> {
    final Map<Long, CompletableFuture<Reply>> pending = new ConcurrentHashMap<>();
    private volatile Throwable cause;

    @Override
    protected void channelRead0(ChannelHandlerContext context, Reply reply) {
      CompletableFuture<Reply> future = pending.remove(reply.requestId());
      if (future != null) {
        future.complete(reply);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext context, Throwable error) {
      cause = error; // a malformed or oversized reply, or an I/O error: the connection is unusable
      context.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext context) {
      KvsException closed = closedError();
      for (CompletableFuture<Reply> future : pending.values()) {
        future.completeExceptionally(closed);
      }
      pending.clear();
      context.fireChannelInactive();
    }

    KvsException closedError() {
      Throwable why = cause;
      return why == null
          ? new ClosedException("connection closed")
          : new KvsException(StatusCode.IO_ERROR, "connection failed: " + why, why);
    }
  }
}
