package io.kvs.tools.local;

import io.kvs.core.cli.Processes;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./kvs local kill|pause|resume|restart NAME}: faults injected into one process of a local
 * cluster, for real -- SIGKILL, SIGSTOP, SIGCONT, and a restart with the command line the process
 * was started with (after a SIGKILL if it still runs). NAME is a server id ({@code s1}), a master
 * id ({@code m1}), {@code zookeeper}, or a process name as {@code ./kvs local status} prints it
 * ({@code server-s1}).
 */
final class LocalFault {
  /** How long a killed process may take to be gone, and a signal command to run. */
  private static final long EXIT_TIMEOUT_SECONDS = 10;

  enum Action {
    KILL,
    PAUSE,
    RESUME,
    RESTART
  }

  private final ClusterDirectory directory;

  LocalFault(ClusterDirectory directory) {
    this.directory = directory;
  }

  /** Applies {@code action} to process {@code target}; returns the exit status for the command. */
  int run(Action action, String target) throws Exception {
    Map<String, String> state = directory.load();
    String name = resolve(state, target);
    Optional<ProcessHandle> process = ClusterDirectory.running(state.get("pid." + name));
    switch (action) {
      case KILL -> {
        ProcessHandle running = require(process, name);
        kill(running);
        System.out.printf("killed %s (pid %d) with SIGKILL%n", name, running.pid());
      }
      case PAUSE -> {
        signal(require(process, name), "STOP");
        System.out.printf("paused %s (pid %d) with SIGSTOP%n", name, process.get().pid());
      }
      case RESUME -> {
        signal(require(process, name), "CONT");
        System.out.printf("resumed %s (pid %d) with SIGCONT%n", name, process.get().pid());
      }
      case RESTART -> {
        if (process.isPresent()) {
          kill(process.get());
          System.out.printf("killed %s (pid %d) with SIGKILL%n", name, process.get().pid());
        }
        LocalProcesses.relaunch(directory, state, name);
        System.out.printf("restarted %s (pid %s)%n", name, state.get("pid." + name));
      }
    }
    return 0;
  }

  /** The recorded process name {@code target} stands for. */
  static String resolve(Map<String, String> state, String target) {
    for (String name : List.of(target, "server-" + target, "master-" + target)) {
      if (state.containsKey("pid." + name)) {
        return name;
      }
    }
    throw new IllegalArgumentException(
        "no process "
            + target
            + " in this local cluster; known: "
            + String.join(
                ", ",
                state.keySet().stream()
                    .filter(key -> key.startsWith("pid."))
                    .map(key -> key.substring(4))
                    .toList()));
  }

  private static ProcessHandle require(Optional<ProcessHandle> process, String name) {
    return process.orElseThrow(() -> new IllegalStateException(name + " is not running"));
  }

  private static void kill(ProcessHandle process) throws Exception {
    process.destroyForcibly(); // SIGKILL on Linux
    if (!Processes.awaitExit(process, Duration.ofSeconds(EXIT_TIMEOUT_SECONDS))) {
      throw new IllegalStateException(
          "pid " + process.pid() + " still runs " + EXIT_TIMEOUT_SECONDS + " s after SIGKILL");
    }
  }

  /** Sends SIGSTOP or SIGCONT (which the JDK has no call for) through kill(1). */
  static void signal(ProcessHandle process, String signal)
      throws IOException, InterruptedException {
    Process kill =
        new ProcessBuilder("kill", "-s", signal, Long.toString(process.pid()))
            .redirectErrorStream(true)
            .start();
    if (!kill.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      kill.destroyForcibly();
      throw new IllegalStateException("kill -s " + signal + " did not return");
    }
    if (kill.exitValue() != 0) {
      throw new IllegalStateException(
          "kill -s "
              + signal
              + " "
              + process.pid()
              + " failed: "
              + new String(kill.getInputStream().readAllBytes()).trim());
    }
  }
}
