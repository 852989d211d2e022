package io.kvs.bench.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Simulated hosts on this machine: a network namespace per host, each with one veth pair whose
 * other end is attached to a bridge in the root namespace, all on one /24 subnet, so that processes
 * in different namespaces reach each other only through their veth interfaces and the bridge, as
 * separate machines on one switch would (and 127.0.0.1 is each host's own). The root namespace is
 * the subnet's {@code .1}; host {@code i} (from 1) is {@code .(10 + i)}. Names carry a random
 * suffix so that a run left behind by a killed test does not collide; {@link #close} removes
 * everything (deleting a namespace deletes its veth pair).
 */
final class NamespaceHosts implements AutoCloseable {
  private final String suffix = Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000));
  private final String subnet;
  private final String bridge = "kvsbr" + suffix;
  private final List<String> namespaces = new ArrayList<>();

  private NamespaceHosts(String subnet) {
    this.subnet = subnet;
  }

  /**
   * Makes the bridge and {@code hosts} namespaces on subnet {@code 10.X.Y.0/24} given as "10.X.Y".
   */
  static NamespaceHosts create(String subnet, int hosts) throws IOException {
    NamespaceHosts made = new NamespaceHosts(subnet);
    try {
      made.run("ip", "link", "add", made.bridge, "type", "bridge");
      made.run("ip", "addr", "add", subnet + ".1/24", "dev", made.bridge);
      made.run("ip", "link", "set", made.bridge, "up");
      for (int i = 1; i <= hosts; i++) {
        made.addHost(i);
      }
      return made;
    } catch (IOException | RuntimeException e) {
      made.close();
      throw e;
    }
  }

  private void addHost(int i) throws IOException {
    String namespace = namespace(i);
    String outside = "kvsv" + suffix + "h" + i;
    run("ip", "netns", "add", namespace);
    namespaces.add(namespace);
    run("ip", "link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", namespace);
    run("ip", "link", "set", outside, "master", bridge);
    run("ip", "link", "set", outside, "up");
    run("ip", "netns", "exec", namespace, "ip", "addr", "add", address(i) + "/24", "dev", "eth0");
    run("ip", "netns", "exec", namespace, "ip", "link", "set", "eth0", "up");
    run("ip", "netns", "exec", namespace, "ip", "link", "set", "lo", "up");
  }

  /** The root namespace's address on the subnet (where ZooKeeper and the master listen). */
  String rootAddress() {
    return subnet + ".1";
  }

  /** Host {@code i}'s address (from 1). */
  String address(int i) {
    return subnet + "." + (10 + i);
  }

  /** Host {@code i}'s namespace. */
  String namespace(int i) {
    return "kvsns" + suffix + "h" + i;
  }

  /** {@code command} prefixed so that it runs in host {@code i}'s namespace. */
  List<String> inHost(int i, List<String> command) {
    List<String> wrapped = new ArrayList<>(List.of("ip", "netns", "exec", namespace(i)));
    wrapped.addAll(command);
    return wrapped;
  }

  /** Whether this machine can make namespaces: root, with the ip tool. */
  static String unavailableBecause() {
    try {
      Process probe = new ProcessBuilder("ip", "netns", "list").redirectErrorStream(true).start();
      if (!probe.waitFor(10, TimeUnit.SECONDS) || probe.exitValue() != 0) {
        return "ip netns list failed";
      }
    } catch (IOException | InterruptedException e) {
      return "no ip tool: " + e.getMessage();
    }
    return "root".equals(System.getProperty("user.name")) ? null : "not root";
  }

  private void run(String... command) throws IOException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    boolean ended;
    try {
      ended = process.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new IOException("interrupted: " + String.join(" ", command), e);
    }
    if (!ended) {
      process.destroyForcibly();
      throw new IOException("timed out: " + String.join(" ", command));
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + output.strip());
    }
  }

  @Override
  public void close() throws IOException {
    IOException failure = null;
    for (String namespace : namespaces) {
      try {
        run("ip", "netns", "delete", namespace);
      } catch (IOException e) {
        failure = failure == null ? e : failure;
      }
    }
    namespaces.clear();
    try {
      run("ip", "link", "delete", bridge);
    } catch (IOException e) {
      if (failure == null && !e.getMessage().contains("Cannot find device")) {
        failure = e;
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
