package io.kvs.client;

import io.kvs.core.ClosedException;
import io.kvs.core.InvalidRequestException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.core.wire.WireCodec;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A plain-TCP connection with no I/O thread of its own: the threads that use it write and read it
 * (docs/ARCHITECTURE.md, "The client's threads").
 *
 * <p><b>Writing.</b> A caller encodes its frame and queues it; whichever caller finds no write in
 * progress writes every queued frame (up to {@link #WRITE_BUFFER_BYTES} per system call) before it
 * returns, so concurrent callers never wait for each other and a lone caller writes its own. Under
 * load (at least {@link #DEFER_WRITES_OUTSTANDING} requests outstanding and another thread reading)
 * a caller leaves its frame to the reader, which writes what was queued before it reads or blocks
 * again (waking it if it is blocked): frames queued while it was busy go out in one system call, as
 * a Netty event loop's do, where each caller's own write would give the server one request per
 * segment. Whoever holds the reading role writes the queue before it blocks or gives the role up,
 * so a queued frame never waits for a reply to arrive; while it writes, a stalled write does not
 * stop it reading.
 *
 * <p><b>Reading.</b> One thread at a time reads (leader/followers). A blocking call's thread that
 * sent a request ({@link #awaitSent}) reads for everyone until its own reply arrives, then hands
 * the role to another waiting caller, or, with none, to a reader task on the client's blocking
 * pool, which reads while anything is outstanding. A lone blocking caller so writes its request and
 * reads its reply itself: no other thread is woken. Requests of the asynchronous API start the
 * reader task when nobody reads. Whoever reads also fails the requests whose time ran out (checked
 * every {@link #READ_SLICE_NANOS}: a reader never blocks longer than that), so nothing else keeps
 * time.
 *
 * <p><b>Bounds.</b> The requests outstanding are bounded by the client's operations in flight; the
 * connection's buffers are fixed (64 KiB in, 256 KiB out, direct); a reply longer than the input
 * buffer is gathered into its own array, up to the largest frame the protocol allows ({@link
 * WireCodec#MESSAGE_BYTES_MAX}), and a longer one fails the connection; a server that takes no
 * bytes for the longest timeout of the requests being written fails it too. When the connection
 * fails, every outstanding request fails: with an {@link UnsentRequestException} if none of its
 * bytes had been written (a write can be retried), else with the connection's error (its outcome
 * unknown).
 */
final class DirectConnection implements Connection {
  /** The longest a reader blocks before it looks at timeouts and whether it is still needed. */
  static final long READ_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  /** The most replies a caller that got its own dispatches for others before it stops reading. */
  static final int PASS_ON_REPLIES_MAX = 64;

  /**
   * The requests outstanding on a connection from which a caller leaves its write to the thread
   * reading it; below it, a caller writes its own frame at once.
   */
  static final int DEFER_WRITES_OUTSTANDING = 16;

  /** The most bytes one write system call carries. */
  static final int WRITE_BUFFER_BYTES = 256 * 1024;

  private static final long DEFAULT_WRITE_STALL_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final int READ_BUFFER_BYTES = 64 * 1024;
  private static final int LENGTH_BYTES = 4;

  /** The request this thread sent last as a blocking call that will wait for it itself. */
  private static final ThreadLocal<Pending> SENT = new ThreadLocal<>();

  private final SocketChannel channel;
  private final String server;
  private final Executor readers;
  private final Selector readable;
  private final Selector writable;
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final Queue<Pending> outbox = new ConcurrentLinkedQueue<>();
  private final AtomicLong nextId = new AtomicLong(1);
  private final AtomicBoolean writing = new AtomicBoolean();
  private final AtomicBoolean reading = new AtomicBoolean();
  // Whether the thread holding `reading` will look at the outbox before it next blocks: false
  // while it blocks in a read select or has not taken the role yet. A caller that queues a frame
  // and then sees it true may leave the frame to it; the reader clears it before it looks at the
  // outbox for the last time, so one of the two always sees the other's write.
  private volatile boolean readerAwake;
  private volatile Thread reader; // the thread holding `reading`, or null
  private final AtomicBoolean readerQueued = new AtomicBoolean();
  private final AtomicReference<KvsException> failure = new AtomicReference<>();

  // Touched only by the thread holding `reading` (which orders the hand-overs). Direct buffers of
  // the connection's own: reading into a heap buffer, the JDK would keep a direct copy of the
  // largest one per thread that ever read, and every caller may read.
  private final ByteBuffer in =
      ByteBuffer.allocateDirect(READ_BUFFER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  private byte[] large; // the body of a frame longer than `in`, as far as it came
  private int largeFilled;
  private long lastSweep = System.nanoTime();

  // Touched only by the thread holding `writing`.
  private final ByteBuffer out = ByteBuffer.allocateDirect(WRITE_BUFFER_BYTES);
  private final SelectionKey
      writableKey; // its interest grows to OP_READ while the reader is stalled

  /** One request: its frame until written, its reply, and the caller waiting for it, if any. */
  static final class Pending {
    final DirectConnection connection;
    final long id;
    ByteBuffer frame; // until copied out; touched by the thread holding `writing`
    final long timeoutNanos;
    final long deadline;
    final CompletableFuture<Reply> reply = new CompletableFuture<>();
    volatile boolean started; // some of its bytes may have gone out
    volatile Thread waiter;

    Pending(DirectConnection connection, long id, ByteBuffer frame, long timeoutNanos) {
      this.connection = connection;
      this.id = id;
      this.frame = frame;
      this.timeoutNanos = timeoutNanos;
      this.deadline = System.nanoTime() + timeoutNanos;
    }
  }

  /**
   * A connection over {@code channel}, connected and past the handshake, non-blocking.
   *
   * @param readers runs the reader task
   * @throws IOException if the selectors cannot be opened
   */
  DirectConnection(SocketChannel channel, String server, Executor readers) throws IOException {
    this.channel = channel;
    this.server = server;
    this.readers = readers;
    Selector forReading = Selector.open();
    Selector forWriting;
    try {
      forWriting = Selector.open();
    } catch (IOException e) {
      forReading.close();
      throw e;
    }
    this.readable = forReading;
    this.writable = forWriting;
    channel.register(readable, SelectionKey.OP_READ);
    writableKey = channel.register(writable, SelectionKey.OP_WRITE);
  }

  @Override
  public CompletableFuture<Reply> send(Request request) {
    return send(request, 0, false);
  }

  @Override
  public CompletableFuture<Reply> send(Request request, long timeoutNanos) {
    return send(request, timeoutNanos, false);
  }

  @Override
  public CompletableFuture<Reply> send(Request request, long timeoutNanos, boolean callerWaits) {
    long id = nextId.getAndIncrement();
    byte[] body;
    try {
      body = WireCodec.encode(request.withRequestId(id));
    } catch (InvalidRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    ByteBuffer frame =
        ByteBuffer.allocate(LENGTH_BYTES + body.length).order(ByteOrder.LITTLE_ENDIAN);
    frame.putInt(body.length).put(body).flip();
    if (pending.isEmpty() && takeReading()) {
      try {
        noticeClose();
      } finally {
        release();
      }
    }
    Pending sent = new Pending(this, id, frame, timeoutNanos);
    pending.put(id, sent);
    KvsException failed = failure.get();
    if (failed != null) {
      // Closed before or while it was added: fail() may have missed it, so fail it here.
      if (pending.remove(id, sent)) {
        sent.reply.completeExceptionally(unsent(failed));
      }
      return sent.reply;
    }
    outbox.add(sent);
    if (!leftToReader()) {
      flush();
    }
    if (callerWaits) {
      SENT.set(sent);
    } else {
      ensureReader();
    }
    return sent.reply;
  }

  /**
   * Whether the frame just queued may be left to the thread reading: only under load, and if that
   * thread is blocked in a read select, it is woken (once per block: the selector coalesces).
   */
  private boolean leftToReader() {
    if (pending.size() < DEFER_WRITES_OUTSTANDING || !reading.get()) {
      return false;
    }
    Thread holder = reader;
    if (holder == null || holder == Thread.currentThread()) {
      return false; // the role is being taken or given up, or this thread writes anyway
    }
    if (!readerAwake) {
      readable.wakeup();
    }
    return true;
  }

  /** Whether a thread other than the caller holds the reading role (for tests). */
  boolean readByAnotherThread() {
    Thread holder = reader;
    return holder != null && holder != Thread.currentThread();
  }

  /** Takes the reading role if nobody holds it. */
  private boolean takeReading() {
    if (!reading.compareAndSet(false, true)) {
      return false;
    }
    reader = Thread.currentThread();
    readerAwake = true;
    return true;
  }

  /**
   * Fails the connection if the server closed it while it was idle (nobody reads then), so that a
   * request is not written after the server's end of the stream, where it would be lost with its
   * outcome unknown: it fails unsent instead, and the operation retries on a new connection. Holds
   * {@code reading}; bytes that came are kept for the next reader.
   */
  private void noticeClose() {
    try {
      readSome();
    } catch (IOException | RuntimeException e) {
      fail(broken("connection to", e));
    }
  }

  /**
   * Called by a blocking call's thread before it waits for {@code result}: if the thread's last
   * request went out on a direct connection as one it waits for itself, reads for everyone until
   * its reply (or {@code result}) is complete. Returns at once otherwise.
   */
  static void awaitSent(CompletableFuture<?> result) {
    Pending sent = SENT.get();
    if (sent == null) {
      return;
    }
    SENT.remove();
    sent.connection.await(sent, result);
  }

  /** Uninterruptibly, keeping the interrupt status (the operation timeout bounds the wait). */
  private void await(Pending mine, CompletableFuture<?> result) {
    Thread me = Thread.currentThread();
    boolean interrupted = Thread.interrupted();
    try {
      while (!mine.reply.isDone() && !result.isDone()) {
        if (takeReading()) {
          try {
            interrupted |= readWhile(() -> !mine.reply.isDone() && !result.isDone());
            passOnWhatCame();
          } finally {
            release();
          }
          continue;
        }
        mine.waiter = me; // published before the re-check, so a releasing reader finds it
        if (!mine.reply.isDone() && !result.isDone() && reading.get()) {
          LockSupport.parkNanos(this, READ_SLICE_NANOS);
          interrupted |= Thread.interrupted();
        }
      }
    } finally {
      mine.waiter = null;
      ensureReader(); // a reader may have handed its role to this thread
      if (interrupted) {
        me.interrupt();
      }
    }
  }

  /**
   * Before a caller gives up reading: dispatches the replies that already came (at most {@link
   * #PASS_ON_REPLIES_MAX}, without waiting), so that their waiters are not left until the next
   * reader wakes. Holds {@code reading}.
   */
  private void passOnWhatCame() {
    try {
      for (int passed = 0; passed < PASS_ON_REPLIES_MAX && !pending.isEmpty(); passed++) {
        Reply reply = nextReply(false);
        if (reply == null) {
          return;
        }
        dispatch(reply);
      }
    } catch (IOException | RuntimeException e) {
      fail(broken("connection to", e));
    }
  }

  /**
   * Makes sure someone reads while anything is outstanding: queues the reader task if nobody does.
   */
  private void ensureReader() {
    if (reading.get() || pending.isEmpty() || failure.get() != null) {
      return;
    }
    if (!readerQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      readers.execute(this::readForOthers);
    } catch (RejectedExecutionException e) {
      readerQueued.set(false);
      fail(new ClosedException("the KVS client is closed"));
    }
  }

  /** The reader task: reads while anything is outstanding and no other thread reads. */
  private void readForOthers() {
    readerQueued.set(false);
    while (!pending.isEmpty() && failure.get() == null && takeReading()) {
      try {
        readWhile(() -> !pending.isEmpty()); // a pool thread: interrupts mean nothing here
      } finally {
        release();
      }
    }
  }

  /**
   * Gives up reading, after writing what callers left to the reader; a caller waiting for a reply
   * takes over, else the reader task if needed.
   */
  private void release() {
    readerAwake = false;
    flushLeft();
    reader = null;
    reading.set(false);
    flushLeft(); // a caller that saw the role still held may have left a frame since
    if (pending.isEmpty() || failure.get() != null) {
      return;
    }
    for (Pending other : pending.values()) {
      Thread waiter = other.waiter;
      if (waiter != null) {
        LockSupport.unpark(waiter);
        return;
      }
    }
    ensureReader();
  }

  /**
   * Reads and dispatches replies while {@code more}; holds {@code reading}. Returns whether the
   * thread was interrupted meanwhile: the status is cleared, as an interrupted thread's selects
   * would not block.
   */
  private boolean readWhile(BooleanSupplier more) {
    boolean interrupted = false;
    try {
      while (failure.get() == null && more.getAsBoolean()) {
        Reply reply = nextReply(true);
        if (reply != null) {
          dispatch(reply);
        }
        sweepIfDue();
        interrupted |= Thread.interrupted();
      }
    } catch (IOException | RuntimeException e) {
      fail(broken("connection to", e));
    }
    return interrupted;
  }

  /**
   * The next reply, or null if none came: within a read slice if {@code wait}, else among the bytes
   * already here.
   */
  private Reply nextReply(boolean wait) throws IOException {
    while (true) {
      Reply framed = takeFrame();
      if (framed != null) {
        return framed;
      }
      flushLeft(); // the replies that came are dispatched: their callers' next requests go out
      if (readSome() == 0) {
        if (!wait) {
          return null;
        }
        readerAwake = false;
        flushLeft();
        readable.selectedKeys().clear();
        int ready = readable.select(TimeUnit.NANOSECONDS.toMillis(READ_SLICE_NANOS));
        readerAwake = true;
        if (ready == 0) {
          return null;
        }
      }
    }
  }

  /** Reads what has come into the read buffer, without waiting; the bytes read. */
  private int readSome() throws IOException {
    int read = channel.read(in);
    if (read < 0) {
      throw new EOFException(server + " closed the connection");
    }
    return read;
  }

  /**
   * A whole frame from the read buffer, decoded, or null. A frame longer than the buffer is
   * gathered into its own array as it comes.
   */
  private Reply takeFrame() throws IOException {
    if (large != null) {
      in.flip();
      int count = Math.min(in.remaining(), large.length - largeFilled);
      in.get(large, largeFilled, count);
      in.compact();
      largeFilled += count;
      if (largeFilled < large.length) {
        return null;
      }
      byte[] body = large;
      large = null;
      return WireCodec.decodeReply(body);
    }
    if (in.position() < LENGTH_BYTES) {
      return null;
    }
    int size = in.getInt(0);
    if (size < 0 || size > WireCodec.MESSAGE_BYTES_MAX) {
      throw new IOException("a reply frame of " + Integer.toUnsignedString(size) + " bytes");
    }
    int whole = LENGTH_BYTES + size;
    if (whole > in.capacity()) {
      large = new byte[size];
      largeFilled = 0;
      in.flip().position(LENGTH_BYTES);
      in.compact();
      return takeFrame();
    }
    if (in.position() < whole) {
      return null;
    }
    byte[] body = new byte[size];
    in.get(LENGTH_BYTES, body);
    in.flip().position(whole);
    in.compact();
    return WireCodec.decodeReply(body);
  }

  private void dispatch(Reply reply) {
    Pending answered = pending.remove(reply.requestId());
    if (answered == null) {
      return; // timed out already
    }
    answered.reply.complete(reply);
    wake(answered);
  }

  /** Fails the requests whose time ran out, at most once per read slice. */
  private void sweepIfDue() {
    long now = System.nanoTime();
    if (now - lastSweep < READ_SLICE_NANOS) {
      return;
    }
    lastSweep = now;
    for (Pending waiting : pending.values()) {
      if (waiting.timeoutNanos > 0
          && now - waiting.deadline >= 0
          && pending.remove(waiting.id, waiting)) {
        waiting.reply.completeExceptionally(new TimeoutException());
        wake(waiting);
      }
    }
  }

  private static void wake(Pending answered) {
    Thread waiter = answered.waiter;
    if (waiter != null && waiter != Thread.currentThread()) {
      LockSupport.unpark(waiter);
    }
  }

  /** Writes the frames callers left to the reader, if any; holds {@code reading}. */
  private void flushLeft() {
    if (!outbox.isEmpty()) {
      flush();
    }
  }

  /** Writes the queued frames unless another thread is writing them. */
  private void flush() {
    while (!outbox.isEmpty() && writing.compareAndSet(false, true)) {
      try {
        writeBatch();
      } catch (IOException | RuntimeException e) {
        fail(broken("sending to", e));
      } finally {
        writing.set(false);
      }
    }
  }

  /**
   * Writes every queued frame, copied through the connection's direct buffer ({@link
   * #WRITE_BUFFER_BYTES} per system call); holds {@code writing}. A frame is let go once copied, so
   * an outstanding request does not keep its bytes.
   */
  private void writeBatch() throws IOException {
    if (failure.get() != null) {
      outbox.clear(); // fail() failed their requests
      return;
    }
    long stallNanos = 0; // the longest timeout of the frames in the buffer
    Pending next;
    while ((next = outbox.poll()) != null) {
      if (next.reply.isDone()) {
        continue; // timed out before it was written: it never will be
      }
      next.started = true; // before any byte goes out: see fail()
      ByteBuffer frame = next.frame;
      next.frame = null;
      stallNanos = Math.max(stallNanos, next.timeoutNanos);
      while (frame.hasRemaining()) {
        if (!out.hasRemaining()) {
          drain(stallNanos);
        }
        int count = Math.min(frame.remaining(), out.remaining());
        out.put(frame.slice(frame.position(), count));
        frame.position(frame.position() + count);
      }
    }
    drain(stallNanos);
  }

  /**
   * Writes the buffer out; fails with an IOException if the server takes no bytes for {@code
   * stallNanos} (10 s if 0).
   */
  private void drain(long stallNanos) throws IOException {
    long patience = stallNanos > 0 ? stallNanos : DEFAULT_WRITE_STALL_NANOS;
    boolean interrupted = false;
    out.flip();
    try {
      long stalledUntil = System.nanoTime() + patience;
      while (out.hasRemaining()) {
        int written = channel.write(out);
        long now = System.nanoTime();
        if (written > 0) {
          stalledUntil = now + patience;
          continue;
        }
        if (now - stalledUntil >= 0) {
          throw new IOException(
              "the server took no bytes for " + TimeUnit.NANOSECONDS.toMillis(patience) + " ms");
        }
        // The server may be waiting for its replies to be read before it reads on: someone must.
        long waitMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(stalledUntil - now));
        if (reader == Thread.currentThread()) {
          readWhileStalled(waitMillis);
        } else {
          ensureReader();
          writable.selectedKeys().clear();
          writable.select(waitMillis);
        }
        interrupted |= Thread.interrupted(); // an interrupted thread's select would not block
      }
    } finally {
      out.clear();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The reader's wait while its write is stalled: until the socket takes bytes or replies come (at
   * most {@code waitMillis}, and a read slice), dispatching the replies that came, so that a server
   * waiting for its replies to be read reads on. Holds {@code reading} and {@code writing}, between
   * frames (a reader writes only there).
   */
  private void readWhileStalled(long waitMillis) throws IOException {
    writableKey.interestOps(SelectionKey.OP_WRITE | SelectionKey.OP_READ);
    try {
      writable.selectedKeys().clear();
      writable.select(Math.min(waitMillis, TimeUnit.NANOSECONDS.toMillis(READ_SLICE_NANOS)));
    } finally {
      writableKey.interestOps(SelectionKey.OP_WRITE);
    }
    Reply reply;
    while ((reply = nextReply(false)) != null) {
      dispatch(reply);
    }
    sweepIfDue();
  }

  @Override
  public boolean isOpen() {
    return failure.get() == null;
  }

  @Override
  public void close() {
    fail(new ClosedException("connection closed"));
  }

  /**
   * Fails the connection once: closes it and fails every outstanding request. A request none of
   * whose bytes were written gets an {@link UnsentRequestException}: its writer marks it started
   * before writing, and the channel is closed here before the mark is read, so a request found
   * unmarked was not written and never will be.
   */
  private void fail(KvsException why) {
    if (!failure.compareAndSet(null, why)) {
      return;
    }
    closeQuietly(channel);
    closeQuietly(readable);
    closeQuietly(writable);
    for (Pending outstanding : pending.values()) {
      if (pending.remove(outstanding.id, outstanding)) {
        outstanding.reply.completeExceptionally(outstanding.started ? why : unsent(why));
        wake(outstanding);
      }
    }
    outbox.clear();
  }

  /** Why the connection failed: {@code doing} ("sending to") the server, and what went wrong. */
  private KvsException broken(String doing, Exception e) {
    return new KvsException(
        StatusCode.IO_ERROR, doing + " " + server + " failed: " + e.getMessage(), e);
  }

  private static UnsentRequestException unsent(KvsException why) {
    return new UnsentRequestException(why.getMessage(), why);
  }

  private static void closeQuietly(java.io.Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException | RuntimeException e) {
      // closing what already failed may fail again; nothing to do about it
    }
  }
}
