package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real browser for tests: Debian's {@code chromium} run headless, loading a page, running its
 * scripts for a few seconds of virtual time, and printing the DOM they rendered ({@code
 * --dump-dom}). {@code ./kvs test} installs the package; without it the test fails saying so.
 */
final class HeadlessChromium {
  /** Virtual time the page's scripts get (fetches and timers) before the DOM is dumped. */
  private static final Duration SCRIPT_TIME = Duration.ofSeconds(5);

  /** Bound on one page load, real time. */
  private static final Duration LOAD_TIMEOUT = Duration.ofSeconds(90);

  private static final List<String> CANDIDATES =
      List.of("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome");

  private final Path executable;
  private final Path workDir;

  private HeadlessChromium(Path executable, Path workDir) {
    this.executable = executable;
    this.workDir = workDir;
  }

  /** The installed chromium, its profile and output kept in {@code workDir}; fails if none. */
  static HeadlessChromium find(Path workDir) {
    for (String candidate : CANDIDATES) {
      Path path = Path.of(candidate);
      if (Files.isExecutable(path)) {
        return new HeadlessChromium(path, workDir);
      }
    }
    return fail(
        "no chromium among "
            + CANDIDATES
            + ": this test renders the status page in a real browser; ./kvs test installs"
            + " Debian's chromium package (or run: apt-get install chromium)");
  }

  /** The DOM of {@code url} once its scripts ran, serialized as HTML. */
  String renderedDom(String url) throws IOException, InterruptedException {
    Files.createDirectories(workDir);
    Path output = Files.createTempFile(workDir, "dom", ".html");
    Path log = workDir.resolve("chromium.log");
    Process chromium =
        new ProcessBuilder(
                executable.toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--user-data-dir=" + workDir.resolve("profile"),
                "--virtual-time-budget=" + SCRIPT_TIME.toMillis(),
                "--dump-dom",
                url)
            .redirectOutput(output.toFile())
            .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    try {
      if (!chromium.waitFor(LOAD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        fail("chromium did not render " + url + " within " + LOAD_TIMEOUT + "; see " + log);
      }
    } finally {
      chromium.destroyForcibly();
    }
    if (chromium.exitValue() != 0) {
      fail("chromium failed (status " + chromium.exitValue() + ") on " + url + "; see " + log);
    }
    return Files.readString(output, StandardCharsets.UTF_8);
  }
}
