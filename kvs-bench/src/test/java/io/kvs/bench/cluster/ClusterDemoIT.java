package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cli.Processes;
import io.kvs.tools.ClassPathJar;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code ./kvs demo} runs, shortened (2,000 keys, 2 s of workload): it passes, prints every
 * section, and leaves no process of its cluster running.
 */
class ClusterDemoIT {
  // Kept when a test fails: the processes' logs are in it.
  @TempDir(cleanup = CleanupMode.ON_SUCCESS)
  Path dir;

  @Test
  void theDemoPassesAndStopsItsCluster() throws Exception {
    Path cluster = dir.resolve("demo-cluster");
    Path output = dir.resolve("demo.out");
    Process demo =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dkvs.log.level=WARN",
                "-cp",
                ClassPathJar.write(
                        dir.resolve("classpath.jar"), System.getProperty("java.class.path"))
                    .toString(),
                "io.kvs.tools.demo.ClusterDemo",
                "--dir",
                cluster.toString(),
                "--keys",
                "2000",
                "--seconds",
                "2",
                "--threads",
                "2",
                "--regions",
                "8")
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    try {
      assertThat(demo.waitFor(3, TimeUnit.MINUTES)).as("the demo ends within 3 minutes").isTrue();
    } finally {
      demo.destroyForcibly();
    }
    String printed = Files.readString(output, StandardCharsets.UTF_8);
    assertThat(demo.exitValue()).as(printed).isZero();
    assertThat(printed)
        .contains(
            "==> Starting the cluster",
            "loaded 2,000 keys",
            "0 errors, 0 wrong answers",
            "p99.9",
            "==> Where the regions live",
            "multi-get of 2,000 random keys: 2,000 hold exactly the version last written",
            "2,000 pairs, in key order, 2,000 as last written",
            "stopped in",
            "demo passed");

    Properties state = new Properties();
    try (Reader in = Files.newBufferedReader(cluster.resolve("cluster.properties"))) {
      state.load(in);
    }
    List<String> pids =
        state.stringPropertyNames().stream()
            .filter(name -> name.startsWith("pid."))
            .map(state::getProperty)
            .toList();
    assertThat(pids).hasSize(5);
    for (String pid : pids) {
      // Exited, if not yet reaped (the reaper of an orphan may take seconds).
      assertThat(ProcessHandle.of(Long.parseLong(pid)).map(Processes::running))
          .as("process %s of the demo's cluster", pid)
          .isNotEqualTo(java.util.Optional.of(true));
    }
  }
}
