package io.kvs.tools.shell;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.tools.InProcessCluster;
import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shell against a real cluster in this JVM (ZooKeeper, a master, three region servers, four
 * regions): commands piped in, or given with {@code -e} and {@code --}, and their output.
 */
class ShellTest {
  private static final String CLUSTER = "shell";

  @TempDir static Path directory;
  private static InProcessCluster cluster;

  /** What one run printed (standard output and error interleaved) and its exit status. */
  private record Run(int status, String output) {
    List<String> lines() {
      return output.lines().toList();
    }
  }

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = InProcessCluster.start(directory, CLUSTER, 4, List.of());
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static Run run(String input, boolean interactive, String... args) {
    List<String> all = new ArrayList<>(List.of("--zookeeper", cluster.zookeeper()));
    all.addAll(List.of("--cluster", CLUSTER));
    all.addAll(List.of(args));
    return runRaw(input, interactive, all.toArray(String[]::new));
  }

  private static Run runRaw(String input, boolean interactive, String... args) {
    StringWriter output = new StringWriter();
    PrintWriter writer = new PrintWriter(output, true);
    int status =
        Shell.run(args, new BufferedReader(new StringReader(input)), writer, writer, interactive);
    writer.flush();
    return new Run(status, output.toString());
  }

  @Test
  void pipedCommandsAndTheirAnswers() {
    String input =
        String.join(
            "\n",
            "# a comment, then a blank line",
            "",
            "put greeting \"hello world\"",
            "get greeting",
            "put bin \\x00\\x01\\xff",
            "get bin",
            "get missing",
            "delete greeting",
            "get greeting",
            "put k1 v1",
            "put k2 v2",
            "PUT k3 \"\"",
            "scan k1 k3",
            "scan k - 2",
            "scan k",
            "mget k1 nope k3",
            "cas doc - v1",
            "cas doc - v2",
            "cas doc v0 v2",
            "cas doc v1 v2",
            "delif doc v1",
            "delif doc v2",
            "incr hits",
            "incr hits 41",
            "incr hits many",
            "rscan k - 2",
            "mput m1 a m2 b \\xff c",
            "mget m1 m2 \\xff",
            "atomic put n1 x del m1 put n2 y",
            "mget m1 n1 n2",
            "atomic put n1",
            "bogus",
            "put onlykey",
            "get \"unterminated",
            "scan a b zero",
            "put " + "x".repeat(5000) + " v",
            "quit",
            "get k1");
    Run run = run(input, false);
    assertThat(run.lines())
        .containsExactly(
            "OK",
            "\"hello world\"",
            "OK",
            "\\x00\\x01\\xff",
            "(not found)",
            "OK",
            "(not found)",
            "OK",
            "OK",
            "OK",
            "k1 v1",
            "k2 v2",
            "(2 pairs)",
            "k1 v1",
            "k2 v2",
            "(2 pairs, limit reached)",
            "k1 v1",
            "k2 v2",
            "k3 \"\"",
            "(3 pairs)",
            "k1 v1",
            "nope (not found)",
            "k3 \"\"",
            "OK",
            "(not applied: v1)",
            "(not applied: v1)",
            "OK",
            "(not applied: v2)",
            "OK",
            "1",
            "42",
            "error: the delta must be a whole number, not many",
            "k3 \"\"",
            "k2 v2",
            "(2 pairs, limit reached)",
            "OK (3 pairs)",
            "m1 a",
            "m2 b",
            "\\xff c",
            "OK",
            "m1 (not found)",
            "n1 x",
            "n2 y",
            "error: usage: atomic put <key> <value> | del <key> ...",
            "error: unknown command 'bogus' (help lists the commands)",
            "error: usage: put <key> <value>",
            "error: unterminated quote at column 5",
            "error: the scan limit must be a positive number, not zero",
            "error: TOO_LARGE: key of 5000 bytes exceeds the limit of 4096 bytes");
    assertThat(run.status()).as("a command failed").isEqualTo(1);
  }

  @Test
  void anIncrementOfAValueThatIsNoCounterIsRefused() {
    Run run = run("put bird hello\nincr bird\nget bird\n", false);
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.lines()).hasSize(3);
    assertThat(run.lines().get(1))
        .startsWith("error: INVALID_ARGUMENT: increment")
        .contains("not an 8-byte counter; nothing was written");
    assertThat(run.lines().get(2)).isEqualTo("hello");
  }

  @Test
  void regionsServersAndHelp() {
    Run run = run("regions\nservers\nhelp\n", false);
    assertThat(run.status()).isZero();
    List<String> lines = run.lines();
    assertThat(lines.get(0)).startsWith("region").contains("range", "primary", "epoch", "state");
    assertThat(lines.subList(1, 5))
        .allSatisfy(line -> assertThat(line).matches("[1-4] +\\[.*\\) +s[1-3] +- +\\d+ +OPEN"));
    assertThat(lines.get(1)).contains("[\"\", @\\x00)");
    assertThat(lines.get(4)).contains("[\\xc0\\x00, +inf)");
    assertThat(lines).contains("(4 regions)", "(3 servers in the region map)");
    assertThat(lines).anyMatch(line -> line.matches("s1 +\\d \\([\\d,]+\\) +-"));
    assertThat(run.output()).contains(Commands.HELP);
  }

  @Test
  void oneShotCommandsFromArguments() {
    Run run = run("get e-never-read\n", false, "-e", "put e-a 1", "-e", "get e-a");
    assertThat(run.lines()).containsExactly("OK", "1");
    assertThat(run.status()).isZero();

    run = run("", false, "--", "put", "e-b", "hello world");
    assertThat(run.lines()).containsExactly("OK");
    run = run("", false, "get", "e-b");
    assertThat(run.lines()).containsExactly("\"hello world\"");

    run = run("", false, "-e", "get", "-e", "get e-b");
    assertThat(run.lines()).containsExactly("error: usage: get <key>", "\"hello world\"");
    assertThat(run.status()).isEqualTo(1);
  }

  @Test
  void interactiveSessionsGreetAndPrompt() {
    Run run = run("put e-i 1\nexit\n", true);
    assertThat(run.output())
        .startsWith("connected to cluster 'shell' at " + cluster.zookeeper() + " over tcp")
        .contains("kvs> OK\nkvs> ");
    assertThat(run.status()).isZero();
  }

  @Test
  void clearMessagesWhenThereIsNoClusterToTalkTo() throws Exception {
    Path empty = Files.createDirectories(directory.resolve("no-cluster"));
    Run run = runRaw("", false, "--dir", empty.toString());
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.output()).contains("no local cluster in " + empty, "./kvs local start");

    Files.writeString(
        empty.resolve("cluster.properties"),
        "zookeeper=127.0.0.1:1\ncluster=default\npid.zookeeper=999999999\n");
    run = runRaw("", false, "--dir", empty.toString());
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.output()).contains("is not running");

    run = runRaw("", false, "--transport", "carrier-pigeon");
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.output()).contains("--transport is tcp or fabric, not carrier-pigeon", "usage:");
  }

  @Test
  void theDirectoryOfALocalClusterNamesItsZooKeeper() throws Exception {
    Path local = Files.createDirectories(directory.resolve("local"));
    Files.writeString(
        local.resolve("cluster.properties"),
        "zookeeper="
            + cluster.zookeeper().replace(":", "\\:")
            + "\ncluster="
            + CLUSTER
            + "\npid.zookeeper="
            + ProcessHandle.current().pid()
            + "\n");
    Run run = runRaw("", false, "--dir", local.toString(), "-e", "put e-d 4", "-e", "get e-d");
    assertThat(run.lines()).containsExactly("OK", "4");
  }
}
