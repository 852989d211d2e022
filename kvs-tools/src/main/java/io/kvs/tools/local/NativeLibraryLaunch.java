package io.kvs.tools.local;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a region server's JVM runs a libkvs other than its jar's ({@code LocalCluster start
 * --native-library FILE}): the JVM loads it through {@code -Dkvs.native.library}. A library built
 * with AddressSanitizer ({@code ./kvs asan-library}: clang's sanitizer build, linked against the
 * shared sanitizer runtimes) needs ASan's runtime loaded before every other library of the process,
 * so the JVM starts with it in {@code LD_PRELOAD}, and with the options a JVM can live with:
 *
 * <ul>
 *   <li>{@code handle_segv=0}, {@code handle_sigbus=0}, {@code handle_sigfpe=0}, {@code
 *       handle_sigill=0}: the JVM takes these signals on purpose (safepoint polls, implicit null
 *       checks) and must keep its own handlers; {@code allow_user_segv_handler=1} lets it install
 *       them;
 *   <li>{@code detect_leaks=0}: a JVM's allocations are not the library's, and LeakSanitizer would
 *       report them at exit;
 *   <li>{@code abort_on_error=1}: a report ends the process (a crash the tests see), and {@code
 *       log_path}: the report goes to {@code <logs>/<name>.sanitizer.<pid>}, where the tests look
 *       for it (one path in both variables: clang's ASan runtime carries UBSan, and the variable
 *       read last would otherwise decide where ASan's reports go).
 * </ul>
 *
 * The JVM needs no flag of its own for this (its signal chaining stays as it is).
 */
final class NativeLibraryLaunch {
  /**
   * ASan's runtime as gcc ({@code libasan.so.N}) or clang ({@code libclang_rt.asan-*.so}) ship it.
   */
  private static final Pattern ASAN_RUNTIME =
      Pattern.compile("^\\s*(libasan\\.so[.\\d]*|libclang_rt\\.asan[^ ]*\\.so) => (\\S+)");

  /** ASAN_OPTIONS for a JVM, without the log path. */
  static final String ASAN_OPTIONS =
      "detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0"
          + ":allow_user_segv_handler=1:abort_on_error=1";

  /**
   * What a process's sanitizer report files are named after, following its name: {@code
   * <name>.sanitizer.<pid>}.
   */
  static final String REPORT_SUFFIX = ".sanitizer";

  /** UBSAN_OPTIONS, without the log path. */
  static final String UBSAN_OPTIONS = "print_stacktrace=1:halt_on_error=1";

  private final List<String> jvmOptions;
  private final Map<String, String> environment;

  private NativeLibraryLaunch(List<String> jvmOptions, Map<String, String> environment) {
    this.jvmOptions = jvmOptions;
    this.environment = environment;
  }

  /** A JVM that loads the jar's library. */
  static NativeLibraryLaunch none() {
    return new NativeLibraryLaunch(List.of(), Map.of());
  }

  /**
   * The options and environment for a JVM that loads {@code library} (the jar's when null), whose
   * sanitizer reports go to {@code logs} under {@code name}.
   */
  static NativeLibraryLaunch of(Path library, Path logs, String name) throws IOException {
    if (library == null) {
      return none();
    }
    Path file = library.toAbsolutePath();
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("--native-library " + file + " is no file");
    }
    Map<String, String> environment = new LinkedHashMap<>();
    Optional<Path> asan = asanRuntime(file);
    if (asan.isPresent()) {
      environment.put("LD_PRELOAD", asan.get().toString());
      String logPath = ":log_path=" + logs.resolve(name + REPORT_SUFFIX);
      environment.put("ASAN_OPTIONS", ASAN_OPTIONS + logPath);
      environment.put("UBSAN_OPTIONS", UBSAN_OPTIONS + logPath);
    }
    return new NativeLibraryLaunch(List.of("-Dkvs.native.library=" + file), environment);
  }

  /** Options for the JVM's command line, before the main class. */
  List<String> jvmOptions() {
    return jvmOptions;
  }

  /** Variables to add to the JVM's environment. */
  Map<String, String> environment() {
    return environment;
  }

  /**
   * The ASan runtime {@code library} needs, as the dynamic loader resolves it ({@code ldd}); empty
   * for a library built without ASan.
   */
  static Optional<Path> asanRuntime(Path library) throws IOException {
    Process ldd =
        new ProcessBuilder("ldd", library.toString())
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .start();
    String output = new String(ldd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!ldd.waitFor(30, TimeUnit.SECONDS) || ldd.exitValue() != 0) {
        ldd.destroyForcibly();
        throw new IOException("ldd " + library + " failed:\n" + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while running ldd " + library);
    }
    for (String line : output.lines().toList()) {
      Matcher matcher = ASAN_RUNTIME.matcher(line);
      if (matcher.find()) {
        return Optional.of(Path.of(matcher.group(2)));
      }
    }
    return Optional.empty();
  }
}
