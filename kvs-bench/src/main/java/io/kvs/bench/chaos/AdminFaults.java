package io.kvs.bench.chaos;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.tools.admin.Admin;
import io.kvs.tools.admin.AdminCommands;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Planned changes through the admin commands ({@link AdminCommands}, what {@code ./kvs admin} runs:
 * requests written to ZooKeeper for the master), each on a thread of its own so that an overlapping
 * fault can strike while the master carries it out: a move of a region's primary to a backup in
 * sync, a decommission (waits until the server holds nothing) followed by a recommission, after
 * which the master's balancer must give the empty server replicas again (as to a server that
 * joins), and a balancing of leadership. Healing waits for the command to finish; one that fails or
 * does not finish is an error of the fault.
 */
final class AdminFaults {
  /** How long a command waits for the master (as {@code ./kvs admin --wait}). */
  private static final Duration COMMAND_WAIT = Duration.ofSeconds(180);

  /**
   * How long a recommissioned server may wait for the balancer to give it a replica (a round every
   * 10 s, two regions moving at once, and other faults' repairs first).
   */
  private static final Duration REFILL_WAIT = Duration.ofSeconds(180);

  private final ChaosCluster cluster;

  AdminFaults(ChaosCluster cluster) {
    this.cluster = cluster;
  }

  Faults.Active move(PlannedFault fault, FaultRecord record) throws Exception {
    RegionDescriptor region = cluster.region(fault.target().region());
    List<String> inSync = region.backupsInSync();
    if (inSync.isEmpty()) {
      throw new IllegalStateException("region " + region.id() + " has no backup in sync");
    }
    String target = inSync.get(fault.target().index() % inSync.size());
    record.victim("region " + region.id() + " " + region.primary() + "->" + target);
    CompletableFuture<String> command =
        run(record, List.of("move", Long.toString(region.id()), target));
    return () -> finish(command, record);
  }

  Faults.Active decommission(PlannedFault fault, FaultRecord record) throws Exception {
    String server = Faults.server(cluster, fault.target());
    record.victim("server-" + server);
    CompletableFuture<String> command = run(record, List.of("decommission", server));
    return () -> {
      boolean drained = finish(command, record);
      if (drained) {
        Thread.sleep(fault.holdMillis()); // the fault's planned length: it stays drained so long
      }
      record.note(command(List.of("recommission", server)));
      if (drained) {
        awaitRefilled(server, record);
      }
    };
  }

  /**
   * Waits until the master's balancer has given recommissioned (empty) {@code server} a replica
   * again, as it would a server that joins: an error of the fault if not within {@link
   * #REFILL_WAIT}.
   */
  private void awaitRefilled(String server, FaultRecord record) throws Exception {
    long started = System.nanoTime();
    long deadline = started + REFILL_WAIT.toNanos();
    while (System.nanoTime() < deadline) {
      if (cluster.regions().regions().stream().anyMatch(r -> r.members().contains(server))) {
        record.note(
            "the balancer gave "
                + server
                + " a replica again "
                + (System.nanoTime() - started) / 1_000_000
                + " ms after its recommission");
        return;
      }
      Thread.sleep(100);
    }
    record.error("the balancer gave " + server + " no replica within " + REFILL_WAIT);
  }

  /** Splits the region the target names at its middle by size, as an operator would. */
  Faults.Active split(PlannedFault fault, FaultRecord record) throws Exception {
    RegionDescriptor region = cluster.region(fault.target().region());
    record.victim("region " + region.id() + " " + region.rangeText());
    CompletableFuture<String> command = run(record, List.of("split", Long.toString(region.id())));
    return () -> finish(command, record);
  }

  /**
   * Merges, as an operator would, the first pair of neighbours held by the same servers from the
   * region the target names on (in key order, wrapping around): a split's daughters, for instance,
   * or two regions led by different servers of one set (the master hands one over first). None: the
   * target's region and its neighbour above (the cluster replicates by send-index: the master moves
   * a replica to give them one group first).
   */
  Faults.Active merge(PlannedFault fault, FaultRecord record) throws Exception {
    List<RegionDescriptor> inOrder = cluster.regions().regions();
    if (inOrder.size() < 2) {
      record.victim("none");
      record.injected(System.nanoTime());
      record.note("not merged: one region");
      return () -> {};
    }
    int from = inOrder.indexOf(cluster.region(fault.target().region()));
    RegionDescriptor left = null;
    for (int i = 0; i < inOrder.size() - 1 && left == null; i++) {
      int at = (from + i) % (inOrder.size() - 1);
      if (inOrder.get(at).sameMembersAs(inOrder.get(at + 1))) {
        left = inOrder.get(at);
      }
    }
    if (left == null) {
      left = inOrder.get(Math.min(from, inOrder.size() - 2));
    }
    RegionDescriptor right = inOrder.get(inOrder.indexOf(left) + 1);
    record.victim("regions " + left.id() + " and " + right.id());
    CompletableFuture<String> command = run(record, List.of("merge", Long.toString(left.id())));
    return () -> finish(command, record);
  }

  Faults.Active balance(PlannedFault fault, FaultRecord record) throws Exception {
    record.victim("cluster");
    CompletableFuture<String> command = run(record, List.of("balance"));
    return () -> finish(command, record);
  }

  private CompletableFuture<String> run(FaultRecord record, List<String> words) {
    CompletableFuture<String> command = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                command.complete(command(words));
              } catch (Throwable e) {
                command.completeExceptionally(e);
              }
            },
            "chaos-admin-" + words.get(0));
    thread.setDaemon(true);
    record.injected(System.nanoTime());
    thread.start();
    return command;
  }

  /** Waits for {@code command}; whether it succeeded (else the error is recorded). */
  private static boolean finish(CompletableFuture<String> command, FaultRecord record)
      throws InterruptedException {
    try {
      record.note(command.get(COMMAND_WAIT.toSeconds() + 60, TimeUnit.SECONDS));
      return true;
    } catch (TimeoutException e) {
      record.error("the admin command did not return");
    } catch (java.util.concurrent.ExecutionException e) {
      record.error(String.valueOf(e.getCause().getMessage()));
    }
    return false;
  }

  /** Runs one admin command in a session of its own; what it printed. */
  private String command(List<String> words) throws Exception {
    StringWriter out = new StringWriter();
    try (Admin admin = cluster.newAdmin()) {
      new AdminCommands(admin, new PrintWriter(out), COMMAND_WAIT).run(words);
    }
    return String.join(" ", words) + ": " + out.toString().trim().replace('\n', ';');
  }
}
