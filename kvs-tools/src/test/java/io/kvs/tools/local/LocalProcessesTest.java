package io.kvs.tools.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A process restarted all day keeps the JVM logs of its newest starts, and only its own. */
class LocalProcessesTest {
  @TempDir Path logs;

  @Test
  void aStartPrunesTheOldestStartsJvmLogsOfItsProcessOnly() throws Exception {
    List<String> starts = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      String start = String.format("2026-11-28_01-%02d-00", i);
      starts.add(start);
      Files.writeString(logs.resolve("server-s1-jvm-" + start + ".log"), "x");
      Files.writeString(logs.resolve("server-s1-jvm-" + start + ".log.0"), "x");
    }
    Files.writeString(logs.resolve("server-s10-jvm-2026-11-28_00-00-00.log"), "x");
    Files.writeString(logs.resolve("server-s1.log"), "x");

    LocalProcesses.pruneJvmLogs(logs, "server-s1");

    List<String> left;
    try (Stream<Path> listed = Files.list(logs)) {
      left = listed.map(f -> f.getFileName().toString()).sorted().toList();
    }
    List<String> expected = new ArrayList<>();
    for (String start : starts.subList(25 - 19, 25)) {
      expected.add("server-s1-jvm-" + start + ".log");
      expected.add("server-s1-jvm-" + start + ".log.0");
    }
    expected.add("server-s1.log");
    expected.add("server-s10-jvm-2026-11-28_00-00-00.log");
    assertThat(left).containsExactlyInAnyOrderElementsOf(expected);
  }
}
