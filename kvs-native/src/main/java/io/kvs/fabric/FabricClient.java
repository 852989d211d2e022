package io.kvs.fabric;

import io.kvs.core.ClosedException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import io.kvs.nativelib.NativeLibrary;
import io.kvs.nativelib.internal.NativeMethods;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client end of the fabric transport: one connection to a {@link FabricServer} (or a region
 * server), over which requests travel as one-sided writes and replies come back the same way.
 *
 * <p>{@link #send} and {@link #call} may be called from any thread. One thread at a time drives the
 * native connection (submits queued requests, drives progress, completes futures): a dedicated I/O
 * thread, except while a thread waits in {@link #call}, which drives it itself so that a blocking
 * round trip needs no hand-off between threads. Dependent actions of {@link #send}'s futures should
 * use the {@code *Async} variants so they do not run on the driving thread. If the server stops
 * answering within the timeout, dies or sends a malformed reply, every outstanding request fails
 * and the client is closed: connect again.
 */
public final class FabricClient implements AutoCloseable {
  private static final int STATUS_BUSY = 5;
  private static final long IDLE_SPIN_NANOS = 200_000;
  private static final long IDLE_PARK_NANOS = 20_000;

  private final long handle;
  private final AtomicLong nextId = new AtomicLong(1);
  private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
  private final Map<Long, CompletableFuture<Reply>> inFlight = new ConcurrentHashMap<>();
  private final Thread io;
  // Held by whichever thread drives the native connection.
  private final ReentrantLock driver = new ReentrantLock();
  // Threads waiting in call(): while there are any, they drive and the I/O thread stands aside.
  private final AtomicInteger callers = new AtomicInteger();
  private volatile boolean open = true;
  private volatile KvsException failure;

  private final long timeoutNanos;

  private record Pending(long id, byte[] bytes, CompletableFuture<Reply> future, long queuedAt) {}

  private FabricClient(long handle, String name, long timeoutNanos) {
    this.handle = handle;
    this.timeoutNanos = timeoutNanos;
    this.io = new Thread(this::run, name);
    io.setDaemon(true);
    io.start();
  }

  /**
   * Connects to the server whose bootstrap listens on {@code host:port}.
   *
   * @throws KvsException if libfabric or the provider is not available, or the server cannot be
   *     reached or refuses the connection (INVALID_ARGUMENT naming the reason when the bootstrap's
   *     authentication fails: a wrong or missing client secret on either side)
   */
  public static FabricClient connect(FabricOptions options, String host, int port) {
    NativeLibrary.load();
    long handle =
        NativeMethods.fabricClientConnect(
            options.provider(),
            options.node(),
            host,
            port,
            options.bufferBytes(),
            options.timeoutMillis(),
            options.clientSecretBytes());
    return new FabricClient(
        handle, "kvs-fabric-client-" + host + ":" + port, options.timeoutMillis() * 1_000_000L);
  }

  /**
   * Sends {@code request} (its request id is replaced by this connection's own) and returns its
   * reply. The future fails with {@link ClosedException} once the client is closed, or with the
   * connection's error if it broke.
   */
  public CompletableFuture<Reply> send(Request request) {
    CompletableFuture<Reply> future = enqueue(request);
    LockSupport.unpark(io);
    return future;
  }

  /**
   * Sends {@code request} and waits for its reply, driving the connection from the calling thread
   * while it waits: the lowest-latency way to make one round trip at a time.
   *
   * @throws KvsException the connection's error if it broke, {@link ClosedException} once the
   *     client is closed
   */
  public Reply call(Request request) {
    callers.incrementAndGet();
    try {
      CompletableFuture<Reply> future = enqueue(request);
      while (!future.isDone()) {
        if (failure != null || !open) {
          LockSupport.unpark(io); // it fails what is left
          break;
        }
        if (driver.tryLock()) {
          try {
            if (!future.isDone()) {
              driveOnce();
            }
          } finally {
            driver.unlock();
          }
        } else {
          Thread.yield();
        }
      }
      return await(future);
    } finally {
      callers.decrementAndGet();
    }
  }

  private static Reply await(CompletableFuture<Reply> future) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          if (e.getCause() instanceof KvsException kvs) {
            throw kvs;
          }
          throw new KvsException(StatusCode.IO_ERROR, "fabric request failed", e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private CompletableFuture<Reply> enqueue(Request request) {
    CompletableFuture<Reply> future = new CompletableFuture<>();
    KvsException broken = failure;
    if (broken != null) {
      future.completeExceptionally(broken);
      return future;
    }
    if (!open) {
      future.completeExceptionally(new ClosedException("fabric client is closed"));
      return future;
    }
    long id = nextId.getAndIncrement();
    Pending pending =
        new Pending(id, WireCodec.encode(request.withRequestId(id)), future, System.nanoTime());
    queue.add(pending);
    if ((!open || failure != null) && queue.remove(pending)) {
      // closed between the check and the add, after the I/O thread drained the queue
      KvsException cause = failure;
      future.completeExceptionally(
          cause != null ? cause : new ClosedException("fabric client is closed"));
    }
    return future;
  }

  /** Requests sent and not answered yet. */
  public int outstanding() {
    return inFlight.size() + queue.size();
  }

  /** Closes the connection; outstanding requests fail. Idempotent. */
  @Override
  public void close() {
    if (!open) {
      return;
    }
    open = false;
    LockSupport.unpark(io);
    boolean interrupted = false;
    while (io.isAlive()) {
      try {
        io.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    try {
      serve();
    } finally {
      shutDown();
    }
  }

  private void serve() {
    long idleSince = System.nanoTime();
    while (open && failure == null) {
      if (callers.get() > 0) {
        LockSupport.parkNanos(IDLE_PARK_NANOS); // a caller drives
        continue;
      }
      boolean busy;
      driver.lock();
      try {
        busy = driveOnce();
      } finally {
        driver.unlock();
      }
      long now = System.nanoTime();
      if (busy) {
        idleSince = now;
      } else if (now - idleSince > IDLE_SPIN_NANOS) {
        LockSupport.parkNanos(inFlight.isEmpty() ? 1_000_000 : IDLE_PARK_NANOS);
      } else {
        Thread.yield(); // spin, but never in the way of threads with work
      }
    }
  }

  /** Closes the native connection and fails whatever is outstanding. */
  private void shutDown() {
    driver.lock();
    try {
      KvsException cause =
          failure != null ? failure : new ClosedException("fabric client is closed");
      NativeMethods.fabricClientClose(handle);
      open = false;
      inFlight.values().forEach(f -> f.completeExceptionally(cause));
      inFlight.clear();
      Pending pending;
      while ((pending = queue.poll()) != null) {
        pending.future().completeExceptionally(cause);
      }
    } finally {
      driver.unlock();
    }
  }

  /** One round of driving the connection (caller holds {@link #driver}): whether anything moved. */
  private boolean driveOnce() {
    if (failure != null || !open) {
      return false;
    }
    try {
      boolean busy = submitQueued();
      byte[] finished = NativeMethods.fabricClientPoll(handle);
      if (finished != null) {
        complete(finished);
        busy = true;
      }
      return busy;
    } catch (KvsException e) {
      failure = e;
      LockSupport.unpark(io);
      return false;
    }
  }

  /** Hands queued requests to the native client until it is full; whether any went. */
  private boolean submitQueued() {
    boolean any = false;
    Pending pending;
    while ((pending = queue.peek()) != null) {
      inFlight.put(pending.id(), pending.future());
      int status;
      try {
        status = NativeMethods.fabricClientSubmit(handle, pending.id(), pending.bytes());
      } catch (KvsException e) {
        inFlight.remove(pending.id());
        queue.poll();
        pending.future().completeExceptionally(e);
        if (e.status() == StatusCode.TOO_LARGE) {
          continue; // this request only
        }
        throw e; // the connection broke: the others fail with it
      }
      if (status == STATUS_BUSY) {
        inFlight.remove(pending.id());
        if (System.nanoTime() - pending.queuedAt() > timeoutNanos) {
          queue.poll(); // the server has not made room for it in time
          pending
              .future()
              .completeExceptionally(
                  KvsException.of(
                      StatusCode.OVERLOADED, "request could not be sent within the timeout"));
          continue;
        }
        return any;
      }
      queue.poll();
      any = true;
    }
    return any;
  }

  private void complete(byte[] packed) {
    ByteBuffer in = ByteBuffer.wrap(packed).order(ByteOrder.LITTLE_ENDIAN);
    while (in.hasRemaining()) {
      long id = in.getLong();
      int status = in.get() & 0xff;
      byte[] bytes = new byte[in.getInt()];
      in.get(bytes);
      CompletableFuture<Reply> future = inFlight.remove(id);
      if (future == null) {
        continue;
      }
      if (status != 0) {
        KvsException error =
            KvsException.of(StatusCode.fromCode(status), new String(bytes, StandardCharsets.UTF_8));
        future.completeExceptionally(error);
        failure = error; // the native client breaks the connection on any error
        continue;
      }
      try {
        future.complete(WireCodec.decodeReply(bytes));
      } catch (KvsException e) {
        future.completeExceptionally(e);
      }
    }
  }
}
