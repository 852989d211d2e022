package io.kvs.bench.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The crashes nobody injected, once the cluster stopped: processes that died while the campaign
 * expected them to run ({@link CrashWatch}), and fatal lines or JVM error reports of processes that
 * were not seen dying ({@link LogScan}). A fatal line of a process seen dying is shown as its
 * cause, not counted as another crash.
 */
final class Crashes {
  private Crashes() {}

  /** One line per crash. */
  static List<String> find(ChaosCluster cluster, ChaosCluster.Layout layout) throws IOException {
    Map<String, String> died = new LinkedHashMap<>();
    for (CrashWatch.Crash crash : cluster.watch().crashes()) {
      died.merge(
          crash.name(),
          String.format(
              Locale.ROOT,
              "%s (pid %d) died without the campaign killing it",
              crash.name(),
              crash.pid()),
          (a, b) -> a + "; " + b);
    }
    List<Path> places =
        List.of(
            Path.of("").toAbsolutePath(),
            layout.dir().toAbsolutePath().normalize(),
            Path.of(System.getProperty("java.io.tmpdir")));
    List<String> others = new ArrayList<>();
    for (LogScan.Finding finding : LogScan.scan(cluster.logs(), cluster.watch().pids(), places)) {
      if (died.containsKey(finding.process())) {
        died.merge(finding.process(), "", (a, b) -> a + "; log: " + finding.text());
      } else {
        others.add(finding.process() + ": " + finding.text() + " (" + finding.where() + ")");
      }
    }
    List<String> crashes = new ArrayList<>(died.values());
    crashes.addAll(others);
    return crashes;
  }
}
