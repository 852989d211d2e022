package io.kvs.tools.local;

import io.kvs.core.cli.Processes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Stops a local cluster: servers first, then masters, then ZooKeeper (the processes of one kind
 * together), each with SIGCONT (in case it was paused) and SIGTERM.
 */
final class LocalStop {
  private static final long GRACE_SECONDS = 60;

  /** How long a process that did not stop gets to print its threads' stacks (SIGQUIT). */
  private static final long DUMP_SECONDS = 2;

  private final ClusterDirectory directory;

  LocalStop(ClusterDirectory directory) {
    this.directory = directory;
  }

  void run() throws Exception {
    Map<String, String> state = directory.load();
    List<String> names = new ArrayList<>();
    state.keySet().stream()
        .filter(k -> k.startsWith("pid."))
        .forEach(k -> names.add(k.substring(4)));
    // Reverse start order: servers, then masters, then ZooKeeper; the processes of one kind stop
    // together (each takes a second or two to exit).
    Collections.reverse(names);
    int stopped = 0;
    for (String kind : List.of("server-", "master-", "")) {
      Map<String, ProcessHandle> group = new LinkedHashMap<>();
      for (String name : names) {
        var process = ClusterDirectory.running(state.get("pid." + name));
        if (name.startsWith(kind) && process.isPresent() && !group.containsKey(name)) {
          group.put(name, process.get());
        }
      }
      for (Map.Entry<String, ProcessHandle> entry : group.entrySet()) {
        ProcessHandle process = entry.getValue();
        System.out.printf("stopping %s (pid %d)%n", entry.getKey(), process.pid());
        // A paused process (./kvs local pause) would not act on SIGTERM.
        LocalFault.signal(process, "CONT");
        process.destroy();
      }
      for (Map.Entry<String, ProcessHandle> entry : group.entrySet()) {
        awaitExit(entry.getKey(), entry.getValue());
        stopped++;
      }
      names.removeAll(group.keySet());
    }
    System.out.println(
        stopped == 0
            ? "no local cluster is running in " + directory.root()
            : "stopped " + stopped + " processes; data stays in " + directory.root());
  }

  private void awaitExit(String name, ProcessHandle process) throws Exception {
    if (!Processes.awaitExit(process, Duration.ofSeconds(GRACE_SECONDS))) {
      // A JVM prints its threads' stacks on SIGQUIT, into its log: what it was waiting for.
      LocalFault.signal(process, "QUIT");
      Processes.awaitExit(process, Duration.ofSeconds(DUMP_SECONDS));
      System.out.printf(
          "%s did not stop within %d s; its threads' stacks are at the end of %s; killing it%n",
          name, GRACE_SECONDS, directory.logs().resolve(name + ".log"));
      process.destroyForcibly();
      if (!Processes.awaitExit(process, Duration.ofSeconds(10))) {
        throw new IllegalStateException(name + " still runs 10 s after SIGKILL");
      }
    }
  }
}
