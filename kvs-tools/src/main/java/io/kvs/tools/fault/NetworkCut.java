package io.kvs.tools.fault;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Cuts one process's TCP traffic to some ports on this host, with iptables: the process is moved
 * into a cgroup (v2) of its own, whose new connections to the ports are dropped by a {@code -m
 * cgroup} rule, and the connections it already has to them are dropped by their port pairs, both
 * ways (a socket keeps the cgroup it was created in). Everything else the process does, and other
 * processes' traffic to those ports, is untouched. {@link #close()} removes the rules and moves the
 * process back to its cgroup. Rules go to the OUTPUT chain of the network namespace this JVM runs
 * in (on loopback every packet passes it), so a campaign run in a namespace of its own leaves the
 * host's rules alone.
 *
 * <p>One cut per process at a time (a process is in one cgroup). Needs root, iptables with the
 * cgroup match and a cgroup v2 hierarchy; {@link #unavailable()} says why not.
 */
public final class NetworkCut implements AutoCloseable {
  private static final List<Path> CGROUP2_ROOTS =
      List.of(Path.of("/sys/fs/cgroup/unified"), Path.of("/sys/fs/cgroup"));
  private static final AtomicLong NEXT = new AtomicLong();
  private static final Set<Long> CUT = ConcurrentHashMap.newKeySet();

  private final Path root;
  private final Path cgroup;
  private final String originalCgroup;
  private final long pid;
  private final Set<Integer> ports;
  private final List<List<String>> rules = new ArrayList<>();
  private boolean closed;

  private NetworkCut(Path root, Path cgroup, String originalCgroup, long pid, Set<Integer> ports) {
    this.root = root;
    this.cgroup = cgroup;
    this.originalCgroup = originalCgroup;
    this.pid = pid;
    this.ports = ports;
  }

  /** Why a cut cannot be made on this host, or empty if it can. */
  public static Optional<String> unavailable() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return Optional.of("not root (iptables and cgroups need it)");
    }
    Optional<Path> root = cgroup2Root();
    if (root.isEmpty()) {
      return Optional.of("no cgroup v2 hierarchy at " + CGROUP2_ROOTS);
    }
    Path probe = root.get().resolve("kvs-cut-probe-" + ProcessHandle.current().pid());
    try {
      Files.createDirectories(probe);
      List<String> rule =
          List.of(
              "-p",
              "tcp",
              "--dport",
              "1",
              "-m",
              "cgroup",
              "--path",
              probe.getFileName().toString(),
              "-j",
              "DROP");
      String added = iptables("-A", rule);
      if (added != null) {
        return Optional.of("iptables cannot drop by cgroup here: " + added);
      }
      String removed = iptables("-D", rule);
      if (removed != null) {
        return Optional.of("iptables cannot remove its probe rule " + rule + ": " + removed);
      }
      return Optional.empty();
    } catch (IOException e) {
      return Optional.of("cannot make a cgroup: " + e.getMessage());
    } finally {
      try {
        Files.deleteIfExists(probe);
      } catch (IOException ignored) {
        // best effort: an empty probe cgroup
      }
    }
  }

  /**
   * Drops {@code process}'s TCP traffic to {@code ports} on this host, from now until closed.
   *
   * @throws IllegalStateException if the process is cut already
   * @throws IOException if a rule cannot be added (whatever was added is removed again)
   */
  public static NetworkCut cut(ProcessHandle process, Collection<Integer> ports)
      throws IOException {
    if (ports.isEmpty()) {
      throw new IllegalArgumentException("no port to cut");
    }
    long pid = process.pid();
    if (!CUT.add(pid)) {
      throw new IllegalStateException("pid " + pid + " is cut already");
    }
    NetworkCut cut;
    try {
      Path root = cgroup2Root().orElseThrow(() -> new IOException("no cgroup v2 hierarchy"));
      Path cgroup = root.resolve("kvs-cut-" + pid + "-" + NEXT.incrementAndGet());
      cut = new NetworkCut(root, cgroup, cgroupOf(pid), pid, new TreeSet<>(ports));
    } catch (IOException | RuntimeException e) {
      CUT.remove(pid);
      throw e;
    }
    try {
      cut.apply();
    } catch (IOException | RuntimeException e) {
      try {
        cut.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return cut;
  }

  /** The ports cut. */
  public Set<Integer> ports() {
    return ports;
  }

  private void apply() throws IOException {
    Files.createDirectories(cgroup);
    Files.writeString(cgroup.resolve("cgroup.procs"), Long.toString(pid));
    for (int port : ports) {
      add(
          List.of(
              "-p",
              "tcp",
              "--dport",
              Integer.toString(port),
              "-m",
              "cgroup",
              "--path",
              cgroup.getFileName().toString(),
              "-j",
              "DROP"));
    }
    for (ProcessSockets.Connection connection : ProcessSockets.connections(pid)) {
      if (!ports.contains(connection.remotePort())) {
        continue;
      }
      String local = Integer.toString(connection.localPort());
      String remote = Integer.toString(connection.remotePort());
      add(List.of("-p", "tcp", "--sport", local, "--dport", remote, "-j", "DROP"));
      add(List.of("-p", "tcp", "--sport", remote, "--dport", local, "-j", "DROP"));
    }
  }

  /** Removes the rules and moves the process back to its cgroup; idempotent. */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    IOException failure = null;
    for (List<String> rule : rules) {
      String error = iptables("-D", rule);
      if (error != null && failure == null) {
        failure = new IOException("cannot remove iptables rule " + rule + ": " + error);
      }
    }
    rules.clear();
    try {
      if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)
          && Files.exists(cgroup.resolve("cgroup.procs"))) {
        Path back = root.resolve(originalCgroup.replaceFirst("^/", ""));
        try {
          Files.writeString(back.resolve("cgroup.procs"), Long.toString(pid));
        } catch (IOException dead) {
          // it died meanwhile (a zombie cannot be moved): its cgroup empties once it is reaped
        }
      }
      removeCgroup();
    } catch (IOException e) {
      if (failure == null) {
        failure = new IOException("cannot remove cgroup " + cgroup + ": " + e.getMessage(), e);
      }
    } finally {
      CUT.remove(pid);
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Removes the cgroup. A process killed while cut leaves it busy until it is reaped (its parent,
   * or init for an orphan, may take a moment): retried for a bounded time.
   */
  private void removeCgroup() throws IOException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        Files.deleteIfExists(cgroup);
        return;
      } catch (java.nio.file.FileSystemException busy) {
        if (System.nanoTime() > deadline) {
          throw busy;
        }
        // No event says when the kernel lets go of the cgroup: look again shortly.
        java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
      }
    }
  }

  private void add(List<String> rule) throws IOException {
    String error = iptables("-A", rule);
    if (error != null) {
      throw new IOException("cannot add iptables rule " + rule + ": " + error);
    }
    rules.add(rule);
  }

  /** Runs {@code iptables -w <action> OUTPUT <rule>}; null if it succeeded, else its output. */
  private static String iptables(String action, List<String> rule) throws IOException {
    List<String> command = new ArrayList<>(List.of("iptables", "-w", action, "OUTPUT"));
    command.addAll(rule);
    SystemCommand.Result result;
    try {
      result = SystemCommand.run(SystemCommand.DEFAULT_TIMEOUT, command);
    } catch (IOException e) {
      return e.getMessage();
    }
    return result.ok() ? null : result.output();
  }

  private static Optional<Path> cgroup2Root() {
    return CGROUP2_ROOTS.stream()
        .filter(path -> Files.exists(path.resolve("cgroup.controllers")))
        .findFirst();
  }

  /** The cgroup v2 path of {@code pid} ("/" for the root), from {@code /proc/<pid>/cgroup}. */
  private static String cgroupOf(long pid) throws IOException {
    for (String line :
        Files.readAllLines(
            Path.of("/proc", Long.toString(pid), "cgroup"), StandardCharsets.UTF_8)) {
      if (line.startsWith("0::")) {
        return line.substring(3);
      }
    }
    return "/";
  }
}
