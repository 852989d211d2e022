package io.kvs.bench.replication;

import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.security.SecurityOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What one region server process had consumed and counted at an instant: CPU time of its threads by
 * role (from {@code /proc/<pid>/task/<tid>/comm} and {@code schedstat}), device bytes ({@code
 * /proc/<pid>/io}), and its own counters (control command {@code stats}: replication and engine
 * statistics by region role). Benchmarks subtract two samples.
 */
record ServerSample(
    Map<ThreadRole, Long> cpuNanos,
    long contextSwitches,
    Map<String, Long> switchesByThread,
    long deviceReadBytes,
    long deviceWriteBytes,
    Map<String, Long> counters) {

  /** Threads by what they do, from the names the server gives them. */
  enum ThreadRole {
    /**
     * Client-port and fabric threads (the client door's shards, stream, fabric): requests, and what
     * a backup does for its primaries.
     */
    REQUESTS,
    /** Compaction threads (and the large-log GC that follows a compaction). */
    COMPACTION,
    /** The replication thread of primaries. */
    REPLICATION,
    /** Everything else: JVM (GC, JIT), ZooKeeper session, maintenance. */
    OTHER;

    static ThreadRole of(String name) {
      if (name.startsWith("kvs-fab")
          || name.startsWith("kvs-shard")
          || name.startsWith("kvs-stream")) {
        return REQUESTS;
      }
      if (name.startsWith("kvs-compact")) {
        return COMPACTION;
      }
      return name.startsWith("kvs-replicate") ? REPLICATION : OTHER;
    }
  }

  static ServerSample take(long pid, String host, int controlPort, SecurityOptions security)
      throws IOException {
    Map<ThreadRole, Long> cpu = new EnumMap<>(ThreadRole.class);
    for (ThreadRole role : ThreadRole.values()) {
      cpu.put(role, 0L);
    }
    long switches = 0;
    Map<String, Long> byThread = new TreeMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          String name = Files.readString(task.resolve("comm")).trim();
          String schedstat = Files.readString(task.resolve("schedstat")).trim();
          long nanos = Long.parseLong(schedstat.substring(0, schedstat.indexOf(' ')));
          cpu.merge(ThreadRole.of(name), nanos, Long::sum);
          long taskSwitches = io.kvs.bench.ServerCpu.contextSwitches(task);
          switches += taskSwitches;
          byThread.merge(threadKind(name), taskSwitches, Long::sum);
        } catch (IOException e) {
          // the thread ended meanwhile
        }
      }
    }
    long read = 0;
    long written = 0;
    long cancelled = 0;
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "io"))) {
      String[] parts = line.split(":\\s*");
      switch (parts[0]) {
        case "read_bytes" -> read = Long.parseLong(parts[1]);
        case "write_bytes" -> written = Long.parseLong(parts[1]);
        case "cancelled_write_bytes" -> cancelled = Long.parseLong(parts[1]);
        default -> {}
      }
    }
    try (ControlClient control = new ControlClient(Duration.ofSeconds(10), security)) {
      ControlReply reply = control.call(host, controlPort, new ControlCommand.Stats());
      if (!reply.isOk()) {
        throw new IOException("stats of " + host + ":" + controlPort + ": " + reply.message());
      }
      return new ServerSample(cpu, switches, byThread, read, written - cancelled, reply.stats());
    }
  }

  /** This sample minus an earlier one of the same server. */
  ServerSample since(ServerSample earlier) {
    Map<ThreadRole, Long> cpu = new EnumMap<>(ThreadRole.class);
    cpuNanos.forEach((role, nanos) -> cpu.put(role, nanos - earlier.cpuNanos.get(role)));
    Map<String, Long> delta = new TreeMap<>();
    counters.forEach((name, value) -> delta.put(name, value - earlier.counter(name)));
    Map<String, Long> switches = new TreeMap<>();
    switchesByThread.forEach(
        (kind, count) ->
            switches.put(kind, count - earlier.switchesByThread.getOrDefault(kind, 0L)));
    return new ServerSample(
        cpu,
        contextSwitches - earlier.contextSwitches,
        switches,
        deviceReadBytes - earlier.deviceReadBytes,
        deviceWriteBytes - earlier.deviceWriteBytes,
        delta);
  }

  /**
   * The kind of thread a name stands for: the name without a trailing index ({@code kvs-shard-1} is
   * {@code kvs-shard}); the JVM's own threads are one kind, {@code jvm}.
   */
  static String threadKind(String name) {
    if (!name.startsWith("kvs-")) {
      return "jvm";
    }
    return name.replaceFirst("-\\d+$", "");
  }

  long counter(String name) {
    return counters.getOrDefault(name, 0L);
  }
}
