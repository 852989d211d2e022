package io.kvs.tools.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Launches a local cluster's processes and records each one's pid, command line and the environment
 * variables it was given in the cluster directory, so that {@code ./kvs local restart} can start
 * the same process again.
 */
final class LocalProcesses {
  // Separates a recorded command's arguments; no argument of ours contains it.
  private static final String SEPARATOR = "\u001f";

  // A process's JVM logs are <name>-jvm-<start time>.log (and .0, .1 when one start's fills).
  private static final String JVM_LOG_INFIX = "-jvm-";
  private static final int JVM_LOGS_KEPT = 20;

  private LocalProcesses() {}

  /**
   * Starts {@code mainClass} with {@code arguments} as process {@code name}, its JVM loading the
   * native library {@code launch} says (with its options and environment), logging to its log.
   */
  static void spawn(
      ClusterDirectory directory,
      Map<String, String> state,
      String name,
      String mainClass,
      String heap,
      NativeLibraryLaunch launch,
      List<String> arguments)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx" + heap);
    // The JVM's statistics file is a mapped page in /tmp that safepoints write: on a disk busy
    // with writeback (catch-ups, compactions and loop disks share the device here) that write is a
    // known cause of safepoints, and every thread with them, stalling for seconds -- long enough to
    // lose a ZooKeeper session (Cassandra and Kafka deployments turn it off for that). A quick
    // chaos run lost three servers' sessions with no fault on them; the cause was not established.
    // Without the file jps and jstat do not list these processes; jcmd still reaches them.
    command.add("-XX:+PerfDisableSharedMem");
    // Pauses and safepoints with their durations, beside the process's log: a stall shows there.
    // Written by a thread of its own (async): the VM thread writing at a safepoint to a busy disk
    // would stop every thread while the write waits. One file per start (%t, the JVM's start
    // time), so restarts do not rotate away what an earlier start logged; the newest
    // JVM_LOGS_KEPT starts' files are kept (see launch).
    command.add("-Xlog:async");
    command.add(
        "-Xlog:gc,safepoint:file="
            + directory.logs().resolve(name + JVM_LOG_INFIX + "%t.log")
            + ":time,uptime:filecount=2,filesize=10m");
    command.addAll(launch.jvmOptions());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(arguments);
    state.put("command." + name, String.join(SEPARATOR, command));
    List<String> environment = new ArrayList<>();
    launch.environment().forEach((variable, value) -> environment.add(variable + "=" + value));
    if (environment.isEmpty()) {
      state.remove("environment." + name);
    } else {
      state.put("environment." + name, String.join(SEPARATOR, environment));
    }
    launch(directory, state, name, command);
  }

  /** Starts process {@code name} again with the command it was started with. */
  static void relaunch(ClusterDirectory directory, Map<String, String> state, String name)
      throws IOException {
    String command = state.get("command." + name);
    if (command == null || command.isEmpty()) {
      throw new IllegalStateException("no command recorded for " + name);
    }
    launch(directory, state, name, Arrays.asList(command.split(SEPARATOR)));
  }

  /** The command line process {@code name} was started with, as recorded. */
  static List<String> recordedCommand(Map<String, String> state, String name) {
    String command = state.get("command." + name);
    if (command == null || command.isEmpty()) {
      throw new IllegalStateException("no command recorded for " + name);
    }
    return List.of(command.split(SEPARATOR));
  }

  /**
   * Starts {@code command} as a new process {@code name}, with {@code environment} added to this
   * process's, and records it as {@link #spawn} does (so that restart and stop find it).
   */
  static void spawnCommand(
      ClusterDirectory directory,
      Map<String, String> state,
      String name,
      List<String> command,
      Map<String, String> environment)
      throws IOException {
    state.put("command." + name, String.join(SEPARATOR, command));
    List<String> variables = new ArrayList<>();
    environment.forEach((variable, value) -> variables.add(variable + "=" + value));
    if (variables.isEmpty()) {
      state.remove("environment." + name);
    } else {
      state.put("environment." + name, String.join(SEPARATOR, variables));
    }
    launch(directory, state, name, command);
  }

  /** The variables process {@code name} was started with beyond this process's environment. */
  static Map<String, String> environment(Map<String, String> state, String name) {
    Map<String, String> environment = new LinkedHashMap<>();
    String recorded = state.get("environment." + name);
    if (recorded != null && !recorded.isEmpty()) {
      for (String entry : recorded.split(SEPARATOR)) {
        int equals = entry.indexOf('=');
        environment.put(entry.substring(0, equals), entry.substring(equals + 1));
      }
    }
    return environment;
  }

  private static void launch(
      ClusterDirectory directory, Map<String, String> state, String name, List<String> command)
      throws IOException {
    Path log = directory.logs().resolve(name + ".log");
    pruneJvmLogs(directory.logs(), name);
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(environment(state, name));
    Process process =
        builder
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    state.put("pid." + name, Long.toString(process.pid()));
    directory.save(state);
  }

  /**
   * Deletes the JVM logs of process {@code name} but those of its newest {@link #JVM_LOGS_KEPT} - 1
   * starts (the one about to begin makes it {@link #JVM_LOGS_KEPT}): a process restarted all day
   * does not fill the disk.
   */
  static void pruneJvmLogs(Path logs, String name) throws IOException {
    String prefix = name + JVM_LOG_INFIX;
    List<Path> files;
    try (Stream<Path> listed = Files.list(logs)) {
      files = listed.filter(f -> f.getFileName().toString().startsWith(prefix)).toList();
    }
    // The start time sorts as text (yyyy-MM-dd_HH-mm-ss); a start's rotated files share it.
    TreeSet<String> starts = new TreeSet<>();
    for (Path file : files) {
      starts.add(start(file.getFileName().toString()));
    }
    while (starts.size() > JVM_LOGS_KEPT - 1) {
      String oldest = starts.pollFirst();
      for (Path file : files) {
        if (start(file.getFileName().toString()).equals(oldest)) {
          Files.deleteIfExists(file);
        }
      }
    }
  }

  /** The start a JVM log file belongs to: its name up to ".log". */
  private static String start(String fileName) {
    int end = fileName.lastIndexOf(".log");
    return end < 0 ? fileName : fileName.substring(0, end);
  }
}
