package io.kvs.bench.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Cuts one process's TCP traffic to one port on this host, with iptables: the process is moved into
 * a cgroup (v2) of its own, whose new connections to the port are dropped by a {@code -m cgroup}
 * rule, and the connections it already has to the port are dropped by their addresses (a socket
 * keeps the cgroup it was created in). Everything else the process does, and other processes'
 * traffic to the port, is untouched. {@link #close()} removes the rules and the cgroup.
 *
 * <p>Needs root, iptables with the cgroup match and a cgroup v2 hierarchy; {@link #unavailable()}
 * says why not.
 */
final class NetworkCut implements AutoCloseable {
  private static final List<Path> CGROUP2_ROOTS =
      List.of(Path.of("/sys/fs/cgroup/unified"), Path.of("/sys/fs/cgroup"));

  private final Path cgroup;
  private final List<List<String>> rules = new ArrayList<>();
  private final long pid;

  private NetworkCut(Path cgroup, long pid) {
    this.cgroup = cgroup;
    this.pid = pid;
  }

  /** Why a cut cannot be made on this host, or empty if it can. */
  static Optional<String> unavailable() {
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
      String path = probe.getFileName().toString();
      List<String> rule =
          List.of("-p", "tcp", "--dport", "1", "-m", "cgroup", "--path", path, "-j", "DROP");
      String added = iptables("-A", rule);
      if (added != null) {
        return Optional.of("iptables cannot drop by cgroup here: " + added);
      }
      iptables("-D", rule);
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

  /** Drops {@code process}'s TCP traffic to {@code port} on this host, from now until closed. */
  static NetworkCut cut(ProcessHandle process, int port) throws IOException {
    Path root = cgroup2Root().orElseThrow(() -> new IOException("no cgroup v2 hierarchy"));
    Path cgroup = root.resolve("kvs-cut-" + process.pid());
    Files.createDirectories(cgroup);
    NetworkCut cut = new NetworkCut(cgroup, process.pid());
    try {
      Files.writeString(cgroup.resolve("cgroup.procs"), Long.toString(process.pid()));
      cut.add(
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
      for (int local : connectionsTo(process.pid(), port)) {
        cut.add(
            List.of(
                "-p",
                "tcp",
                "--sport",
                Integer.toString(local),
                "--dport",
                Integer.toString(port),
                "-j",
                "DROP"));
        cut.add(
            List.of(
                "-p",
                "tcp",
                "--sport",
                Integer.toString(port),
                "--dport",
                Integer.toString(local),
                "-j",
                "DROP"));
      }
    } catch (IOException | RuntimeException e) {
      cut.close();
      throw e;
    }
    return cut;
  }

  @Override
  public void close() throws IOException {
    IOException failure = null;
    for (List<String> rule : rules) {
      String error = iptables("-D", rule);
      if (error != null && failure == null) {
        failure = new IOException("cannot remove iptables rule " + rule + ": " + error);
      }
    }
    rules.clear();
    // Back to the root cgroup (if the process still runs), then the cgroup goes.
    Path root = cgroup.getParent();
    try {
      if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
        Files.writeString(root.resolve("cgroup.procs"), Long.toString(pid));
      }
      Files.deleteIfExists(cgroup);
    } catch (IOException e) {
      if (failure == null) {
        failure = e;
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void add(List<String> rule) throws IOException {
    String error = iptables("-A", rule);
    if (error != null) {
      throw new IOException("cannot add iptables rule " + rule + ": " + error);
    }
    rules.add(rule);
  }

  /** Runs {@code iptables <action> OUTPUT <rule>}; null if it succeeded, else what it printed. */
  private static String iptables(String action, List<String> rule) throws IOException {
    List<String> command = new ArrayList<>(List.of("iptables", "-w", action, "OUTPUT"));
    command.addAll(rule);
    Process process;
    try {
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      return "iptables not found: " + e.getMessage();
    }
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return "iptables did not finish";
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running iptables", e);
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return process.exitValue() == 0 ? null : output.trim();
  }

  private static Optional<Path> cgroup2Root() {
    return CGROUP2_ROOTS.stream()
        .filter(path -> Files.exists(path.resolve("cgroup.controllers")))
        .findFirst();
  }

  /** The local ports of {@code pid}'s established IPv4/IPv6 TCP connections to {@code port}. */
  private static List<Integer> connectionsTo(long pid, int port) throws IOException {
    List<String> inodes = new ArrayList<>();
    try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            inodes.add(target.substring(8, target.length() - 1));
          }
        } catch (IOException gone) {
          // closed meanwhile
        }
      }
    }
    List<Integer> ports = new ArrayList<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path file = Path.of(table);
      if (!Files.exists(file)) {
        continue;
      }
      List<String> lines = Files.readAllLines(file);
      for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
        String[] fields = line.trim().split("\\s+");
        String local = fields[1];
        String remote = fields[2];
        int remotePort = Integer.parseInt(remote.substring(remote.indexOf(':') + 1), 16);
        if (remotePort == port && inodes.contains(fields[9])) {
          ports.add(Integer.parseInt(local.substring(local.indexOf(':') + 1), 16));
        }
      }
    }
    return ports;
  }
}
