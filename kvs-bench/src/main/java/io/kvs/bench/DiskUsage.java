package io.kvs.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Space a directory takes on the device: the sum over every regular file below it of {@code
 * st_blocks * 512}, i.e. what {@code du} reports. This is allocated space, which differs from file
 * sizes both ways: sparse files take less, preallocated ({@code fallocate}) files take their whole
 * allocation even where nothing was written yet.
 *
 * <p>The JDK exposes no {@code st_blocks}, so this asks GNU {@code find} for it ({@code -printf
 * %b}, in 512-byte units); Linux only.
 */
public final class DiskUsage {
  private DiskUsage() {}

  /**
   * Allocated and apparent bytes of every regular file under {@code directory} (0 and 0 if it does
   * not exist).
   */
  public static Usage of(Path directory) {
    if (!Files.isDirectory(directory)) {
      return new Usage(0, 0, 0);
    }
    ProcessBuilder builder =
        new ProcessBuilder(
                "find", directory.toAbsolutePath().toString(), "-type", "f", "-printf", "%b %s\\n")
            .redirectErrorStream(true);
    long blocks = 0;
    long apparent = 0;
    long files = 0;
    try {
      Process process = builder.start();
      try (BufferedReader lines =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII))) {
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          int space = line.indexOf(' ');
          if (space <= 0) {
            continue;
          }
          try {
            blocks += Long.parseLong(line.substring(0, space));
            apparent += Long.parseLong(line.substring(space + 1));
            files++;
          } catch (NumberFormatException e) {
            // A file that vanished while find ran prints a message instead; it takes no space.
          }
        }
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("find did not finish on " + directory);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot measure disk usage of " + directory, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while measuring " + directory, e);
    }
    return new Usage(blocks * 512, apparent, files);
  }

  /**
   * @param allocatedBytes bytes allocated on the device ({@code st_blocks * 512}, summed)
   * @param apparentBytes file sizes summed
   * @param files regular files counted
   */
  public record Usage(long allocatedBytes, long apparentBytes, long files) {}
}
