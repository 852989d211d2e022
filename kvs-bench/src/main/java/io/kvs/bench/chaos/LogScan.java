package io.kvs.bench.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.Stream;

/**
 * Signs of a crash in what the cluster's processes left: a fatal line in their logs (the JVM's
 * fatal error banner, a sanitizer report, a failed {@code KVS_CHECK}, glibc's heap checks, an
 * OutOfMemoryError) and the JVM's {@code hs_err_pid<pid>.log} files of the processes' pids.
 */
final class LogScan {
  /** The lines that mean a process died of a bug (or is about to). */
  static final List<String> FATAL =
      List.of(
          "A fatal error has been detected by the Java Runtime Environment",
          "ERROR: AddressSanitizer",
          "ERROR: LeakSanitizer",
          "WARNING: ThreadSanitizer",
          "runtime error:",
          "kvs: invariant violated",
          "terminate called",
          "java.lang.OutOfMemoryError",
          "Fatal glibc error",
          "double free or corruption",
          "stack smashing detected",
          "malloc(): ",
          "free(): invalid");

  /** Lines kept per log before the rest is only counted. */
  private static final int FINDINGS_PER_FILE_MAX = 5;

  /** One sign of a crash. */
  record Finding(String process, String where, String text) {}

  private LogScan() {}

  /**
   * Scans every {@code *.log} in {@code logs} (named after their process) and looks for {@code
   * hs_err_pid<pid>.log} of {@code pids} in {@code places}.
   */
  static List<Finding> scan(Path logs, Collection<Long> pids, Collection<Path> places)
      throws IOException {
    List<Finding> findings = new ArrayList<>();
    if (Files.isDirectory(logs)) {
      try (Stream<Path> files = Files.list(logs)) {
        for (Path log : (Iterable<Path>) files.sorted()::iterator) {
          if (log.getFileName().toString().endsWith(".log")) {
            scanLog(log, findings);
          }
        }
      }
    }
    for (Path place : places) {
      for (long pid : pids) {
        Path report = place.resolve("hs_err_pid" + pid + ".log");
        if (Files.exists(report)) {
          findings.add(new Finding("pid " + pid, report.toString(), "JVM fatal error report"));
        }
      }
    }
    return findings;
  }

  private static void scanLog(Path log, List<Finding> findings) throws IOException {
    String name = log.getFileName().toString();
    String process = name.substring(0, name.length() - ".log".length());
    int found = 0;
    int number = 0;
    // Logs may hold any bytes a dying process wrote: decode leniently.
    var decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    try (BufferedReader in =
        new BufferedReader(new java.io.InputStreamReader(Files.newInputStream(log), decoder))) {
      String line;
      while ((line = in.readLine()) != null) {
        number++;
        for (String fatal : FATAL) {
          if (line.contains(fatal)) {
            found++;
            if (found <= FINDINGS_PER_FILE_MAX) {
              String text = line.length() > 300 ? line.substring(0, 300) + "..." : line;
              findings.add(new Finding(process, log + ":" + number, text.trim()));
            }
            break;
          }
        }
      }
    }
    if (found > FINDINGS_PER_FILE_MAX) {
      findings.add(
          new Finding(
              process, log.toString(), (found - FINDINGS_PER_FILE_MAX) + " more fatal lines"));
    }
  }
}
