package io.kvs.master.local;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Stops a local cluster: servers first, then masters, then ZooKeeper, each with SIGCONT (in case it
 * was paused) and SIGTERM.
 */
final class LocalStop {
  private static final long GRACE_SECONDS = 60;

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
    // Reverse start order: servers, then masters, then ZooKeeper.
    Collections.reverse(names);
    int stopped = 0;
    for (String name : names) {
      var process = ClusterDirectory.running(state.get("pid." + name));
      if (process.isEmpty()) {
        continue;
      }
      System.out.printf("stopping %s (pid %d)%n", name, process.get().pid());
      // A paused process (./kvs local pause) would not act on SIGTERM.
      LocalFault.signal(process.get(), "CONT");
      process.get().destroy();
      try {
        process.get().onExit().get(GRACE_SECONDS, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        System.out.printf("%s did not stop within %d s; killing it%n", name, GRACE_SECONDS);
        process.get().destroyForcibly();
        process.get().onExit().get(10, TimeUnit.SECONDS);
      }
      stopped++;
    }
    System.out.println(
        stopped == 0
            ? "no local cluster is running in " + directory.root()
            : "stopped " + stopped + " processes; data stays in " + directory.root());
  }
}
