package io.kvs.tools.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A joining server's command line is the first server's with its own id, directory and logs. */
class LocalJoinTest {
  @Test
  void theTemplatesIdDirectoryAndLogNamesBecomeTheNewServers() {
    List<String> template =
        List.of(
            "/usr/bin/java",
            "-Xmx1g",
            "-Xlog:gc,safepoint:file=/c/logs/server-s1-jvm-%t.log:time",
            "-cp",
            "/c/server-s10.jar",
            "io.kvs.server.RegionServerMain",
            "--id",
            "s1",
            "--dir",
            "/c/servers/s1",
            "--secret-file",
            "/c/secret");

    List<String> command = LocalJoin.commandFor(template, "s1", "s4", Path.of("/c/servers/s4"));

    assertThat(command)
        .containsExactly(
            "/usr/bin/java",
            "-Xmx1g",
            "-Xlog:gc,safepoint:file=/c/logs/server-s4-jvm-%t.log:time",
            "-cp",
            "/c/server-s10.jar",
            "io.kvs.server.RegionServerMain",
            "--id",
            "s4",
            "--dir",
            "/c/servers/s4",
            "--secret-file",
            "/c/secret");
  }
}
