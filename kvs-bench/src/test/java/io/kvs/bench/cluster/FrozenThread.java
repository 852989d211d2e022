package io.kvs.bench.cluster;

import static org.assertj.core.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One thread of a process stopped for real while the others run ({@code kvs_thread_freeze}, built
 * with the native library: ptrace of that thread alone), as a deadlock or a system call that never
 * returns would leave it; closing lets it go, if its process still lives.
 */
final class FrozenThread implements AutoCloseable {
  private static final Duration FREEZE_TIMEOUT = Duration.ofSeconds(30);

  private final Process freezer;
  private final String what;

  private FrozenThread(Process freezer, String what) {
    this.freezer = freezer;
    this.what = what;
  }

  /** Stops thread {@code threadName} of {@code process}; returns once it is stopped. */
  static FrozenThread freeze(ProcessHandle process, String threadName) throws IOException {
    String home = System.getProperty("kvs.home");
    if (home == null || home.isEmpty()) {
      fail("system property kvs.home is not set: kvs-bench's pom sets it for Failsafe");
    }
    Path tool = Path.of(home, "kvs-native", "target", "native", "kvs_thread_freeze");
    if (!Files.isExecutable(tool)) {
      fail(tool + " is missing: the native build (mvn verify, ./kvs build) makes it");
    }
    String what = "thread " + threadName + " of pid " + process.pid();
    Process freezer =
        new ProcessBuilder(tool.toString(), Long.toString(process.pid()), threadName)
            .redirectErrorStream(true)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(freezer.getInputStream(), StandardCharsets.UTF_8));
    // The first line says whether it worked; the tool answers at once.
    String first = out.readLine();
    if (first == null || !first.startsWith("frozen ")) {
      freezer.destroyForcibly();
      fail("could not freeze " + what + ": " + first);
    }
    return new FrozenThread(freezer, what);
  }

  /** Waits for the freezer to end by itself (the process died); false if it did not in time. */
  boolean awaitProcessEnd(Duration timeout) throws InterruptedException {
    return freezer.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) && freezer.exitValue() == 3;
  }

  @Override
  public void close() {
    if (!freezer.isAlive()) {
      return;
    }
    freezer.destroy(); // SIGTERM: the tool lets the thread go
    boolean stopped;
    try {
      stopped = freezer.waitFor(FREEZE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopped = false;
    }
    if (!stopped) {
      freezer.destroyForcibly(); // its death lets the thread go too
      fail("the freezer of " + what + " did not stop on SIGTERM");
    }
  }
}
