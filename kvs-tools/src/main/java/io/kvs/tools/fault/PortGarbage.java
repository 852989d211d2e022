package io.kvs.tools.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Unauthenticated bytes on a set of TCP ports, as a stranger on the network would send them: random
 * bytes, frames cut short, length prefixes far beyond any bound, well-known magic numbers followed
 * by junk, an HTTP request with an absurd header, connections reset at once, and connections that
 * send nothing and stay open (held until {@link #close()}). The patterns run on a few threads, each
 * connection bounded by short connect and read timeouts; what the ports answer is read and dropped.
 * Nothing here decides whether the processes survived: the caller checks that.
 */
public final class PortGarbage implements AutoCloseable {
  private static final int CONNECT_TIMEOUT_MS = 1_000;
  private static final int READ_TIMEOUT_MS = 300;
  private static final int READ_BYTES_MAX = 64 << 10;
  private static final int RANDOM_BYTES_MAX = 16 << 10;
  private static final int THREADS = 8;

  /** A port to send to, named for the report ({@code server-s1 tcp}, ...). */
  public record Target(String name, String host, int port) {
    @Override
    public String toString() {
      return name + " (" + host + ":" + port + ")";
    }
  }

  /** What was done. */
  public record Report(
      int targets,
      long connections,
      long refused,
      long bytesSent,
      long bytesAnswered,
      int silentHeld) {}

  /** One way of sending garbage. */
  enum Pattern {
    RANDOM,
    TRUNCATED_FRAME,
    OVERSIZED_LENGTH,
    MAGIC_PREFIX,
    HTTP_JUNK,
    RESET
  }

  private final List<Target> targets;
  private final List<Socket> silent = new ArrayList<>();
  private final ThreadPoolExecutor threads;
  private final AtomicLong connections = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong answered = new AtomicLong();
  private boolean closed;

  private PortGarbage(List<Target> targets) {
    this.targets = List.copyOf(targets);
    int tasks = Math.max(1, targets.size() * Pattern.values().length);
    this.threads =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            0,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(tasks),
            runnable -> {
              Thread thread = new Thread(runnable, "kvs-port-garbage");
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * Opens {@code silentPerPort} silent connections to every target, then sends every pattern once
   * to every target (bytes drawn from {@code seed}) in the background.
   */
  public static PortGarbage start(List<Target> targets, long seed, int silentPerPort) {
    PortGarbage garbage = new PortGarbage(targets);
    SplittableRandom random = new SplittableRandom(seed);
    for (Target target : targets) {
      for (int i = 0; i < silentPerPort; i++) {
        Socket socket = garbage.connect(target);
        if (socket != null) {
          garbage.silent.add(socket);
        }
      }
    }
    for (Target target : targets) {
      for (Pattern pattern : Pattern.values()) {
        SplittableRandom own = random.split();
        garbage.threads.execute(() -> garbage.send(target, pattern, own));
      }
    }
    return garbage;
  }

  /** Waits until every pattern was sent (at most {@code timeoutMillis}); whether they all were. */
  public boolean awaitSent(long timeoutMillis) throws InterruptedException {
    threads.shutdown();
    return threads.awaitTermination(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /** What was done so far. */
  public synchronized Report report() {
    return new Report(
        targets.size(),
        connections.get(),
        refused.get(),
        sent.get(),
        answered.get(),
        silent.size());
  }

  /** Closes the silent connections and stops sending; idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    threads.shutdownNow();
    for (Socket socket : silent) {
      closeQuietly(socket);
    }
  }

  private void send(Target target, Pattern pattern, SplittableRandom random) {
    Socket socket = connect(target);
    if (socket == null) {
      return;
    }
    try (socket) {
      OutputStream out = socket.getOutputStream();
      byte[] bytes = bytes(pattern, random);
      if (pattern == Pattern.RESET) {
        socket.setSoLinger(true, 0); // close() sends RST
        out.write(bytes);
        return;
      }
      out.write(bytes);
      out.flush();
      sent.addAndGet(bytes.length);
      drain(socket);
    } catch (IOException expected) {
      // The port closed the connection on us: the right answer to garbage.
    }
  }

  /** The bytes {@code pattern} sends. */
  static byte[] bytes(Pattern pattern, SplittableRandom random) {
    return switch (pattern) {
      case RANDOM -> random(random, 1 + random.nextInt(RANDOM_BYTES_MAX));
      case TRUNCATED_FRAME -> {
        int claimed = 16 + random.nextInt(64 << 10);
        byte[] body = random(random, claimed / 2);
        yield ByteBuffer.allocate(4 + body.length)
            .order(random.nextBoolean() ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN)
            .putInt(claimed)
            .put(body)
            .array();
      }
      case OVERSIZED_LENGTH -> {
        int[] lengths = {0x7fffffff, 0xffffffff, 0x40000000, 0x80000000};
        byte[] body = random(random, 64);
        yield ByteBuffer.allocate(4 + body.length)
            .order(random.nextBoolean() ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN)
            .putInt(lengths[random.nextInt(lengths.length)])
            .put(body)
            .array();
      }
      case MAGIC_PREFIX -> {
        // A client request starts with the wire version (1), a replication message with "KVSR"
        // (little-endian 0x5253564b), HTTP with a method: junk behind a plausible start goes
        // further into a parser.
        byte[][] starts = {
          {1}, {'K', 'V', 'S', 'R'}, "GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII)
        };
        byte[] start = starts[random.nextInt(starts.length)];
        byte[] body = random(random, 36 + random.nextInt(512));
        yield ByteBuffer.allocate(start.length + body.length).put(start).put(body).array();
      }
      case HTTP_JUNK ->
          ("POST /api/status HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\nX-Junk: "
                  + "a".repeat(16 << 10)
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII);
      case RESET -> random(random, 1 + random.nextInt(64));
    };
  }

  private static byte[] random(SplittableRandom random, int length) {
    byte[] bytes = new byte[length];
    random.nextBytes(bytes);
    return bytes;
  }

  /** Reads what the port answers, briefly, and drops it. */
  private void drain(Socket socket) throws IOException {
    InputStream in = socket.getInputStream();
    byte[] buffer = new byte[4096];
    long total = 0;
    try {
      int read;
      while (total < READ_BYTES_MAX && (read = in.read(buffer)) >= 0) {
        total += read;
      }
    } catch (SocketTimeoutException quiet) {
      // said nothing more within the read timeout
    } finally {
      answered.addAndGet(total);
    }
  }

  private Socket connect(Target target) {
    Socket socket = new Socket();
    try {
      socket.connect(new InetSocketAddress(target.host(), target.port()), CONNECT_TIMEOUT_MS);
      socket.setSoTimeout(READ_TIMEOUT_MS);
      connections.incrementAndGet();
      return socket;
    } catch (IOException e) {
      refused.incrementAndGet();
      closeQuietly(socket);
      return null;
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing a connection we no longer need
    }
  }
}
