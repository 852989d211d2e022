package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Region servers on the AddressSanitizer build of libkvs ({@code ./kvs asan-library}, started with
 * {@code LocalCluster start --native-library}): the build, proof that a server runs it, and the
 * reports it wrote.
 */
final class AsanBuild {
  /**
   * Bound on {@code ./kvs asan-library}: from a clean checkout it compiles the library (minutes on
   * a loaded 2-core machine); under {@code ./kvs test} it mostly waits for, or finds, the build
   * that started in the background.
   */
  private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(30);

  /** What a sanitizer writes when it finds something, in a server's log or its own files. */
  private static final Pattern REPORT =
      Pattern.compile(
          "ERROR: AddressSanitizer|SUMMARY: (Address|UndefinedBehavior)Sanitizer"
              + "|runtime error: |ERROR: LeakSanitizer");

  /** Lines of a report given in a failure: the error, its stack and where the memory went. */
  private static final int REPORT_LINES = 40;

  private AsanBuild() {}

  /** The ASan build of libkvs, built (or brought up to date) by {@code ./kvs asan-library}. */
  static Path library() throws IOException, InterruptedException {
    String home = System.getProperty("kvs.home");
    if (home == null || home.isEmpty()) {
      fail(
          "system property kvs.home (the repository, where ./kvs is) is not set: kvs-bench's pom"
              + " sets it for Failsafe");
    }
    Path kvs = Path.of(home, "kvs");
    Path output = Files.createTempFile("kvs-asan-library", ".log");
    try {
      Process build =
          new ProcessBuilder(kvs.toString(), "asan-library")
              .directory(Path.of(home).toFile())
              .redirectError(ProcessBuilder.Redirect.appendTo(output.toFile()))
              .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
              .start();
      String printed = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!build.waitFor(BUILD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        build.destroyForcibly();
        fail("./kvs asan-library did not finish within " + BUILD_TIMEOUT);
      }
      if (build.exitValue() != 0) {
        fail(
            "./kvs asan-library failed with status "
                + build.exitValue()
                + ":\n"
                + printed
                + Files.readString(output, StandardCharsets.UTF_8));
      }
      List<String> lines = printed.lines().toList();
      Path library = Path.of(lines.get(lines.size() - 1).trim());
      assertThat(library).as("the library ./kvs asan-library printed").isRegularFile();
      return library;
    } finally {
      Files.deleteIfExists(output);
    }
  }

  /**
   * Fails unless process {@code pid} has {@code library} and ASan's runtime mapped: it runs the
   * instrumented build, so a bad access in libkvs would be reported.
   */
  static void assertRunsIt(String name, long pid, Path library) throws IOException {
    String maps = Files.readString(Path.of("/proc", Long.toString(pid), "maps"));
    assertThat(maps).as(name + " maps the ASan build of libkvs").contains(library.toString());
    assertThat(maps)
        .as(name + " maps ASan's runtime")
        .containsPattern("/libasan\\.so|/libclang_rt\\.asan");
  }

  /**
   * Every sanitizer report under {@code logs}, each as its file's name and its first lines (the
   * error, where it happened, and where the memory was freed): the files ASan and UBSan wrote
   * ({@code <name>.sanitizer.<pid>}) and any report a process printed into its log.
   */
  static List<String> reports(Path logs) throws IOException {
    List<String> reports = new ArrayList<>();
    if (!Files.isDirectory(logs)) {
      return reports;
    }
    List<Path> files;
    try (Stream<Path> listed = Files.list(logs)) {
      files = listed.sorted().toList();
    }
    for (Path file : files) {
      String name = file.getFileName().toString();
      if (name.contains(".sanitizer.")) {
        List<String> lines = Files.readAllLines(file, StandardCharsets.ISO_8859_1);
        reports.add(
            file
                + ":\n"
                + String.join("\n", lines.subList(0, Math.min(REPORT_LINES, lines.size()))));
      } else if (name.endsWith(".log")) {
        List<String> found =
            Files.readAllLines(file, StandardCharsets.ISO_8859_1).stream()
                .filter(line -> REPORT.matcher(line).find())
                .limit(REPORT_LINES)
                .toList();
        if (!found.isEmpty()) {
          reports.add(file + " holds a sanitizer report:\n" + String.join("\n", found));
        }
      }
    }
    return reports;
  }

  /**
   * {@code failure}, or if the servers wrote sanitizer reports under {@code logs}, an error that
   * gives them (a server that a report ended makes the test fail somewhere else first, e.g. in a
   * move that cannot be made): the report is what the test is for.
   */
  static Throwable withReports(Path logs, Throwable failure) {
    try {
      List<String> reports = reports(logs);
      if (reports.isEmpty()) {
        return failure;
      }
      AssertionError reported =
          new AssertionError("sanitizer reports of the servers:\n" + String.join("\n\n", reports));
      reported.addSuppressed(failure);
      return reported;
    } catch (IOException e) {
      failure.addSuppressed(e);
      return failure;
    }
  }
}
