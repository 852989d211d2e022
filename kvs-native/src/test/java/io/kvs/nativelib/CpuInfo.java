package io.kvs.nativelib;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;

/** Reads CPU feature flags from /proc/cpuinfo, independently of the native detection. */
final class CpuInfo {
  private CpuInfo() {}

  static boolean hasFlag(String flag) {
    try {
      return Files.readAllLines(Paths.get("/proc/cpuinfo")).stream()
          .filter(line -> line.startsWith("flags"))
          .findFirst()
          .map(line -> Arrays.asList(line.substring(line.indexOf(':') + 1).trim().split("\\s+")))
          .map(flags -> flags.contains(flag))
          .orElse(false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
