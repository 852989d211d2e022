package io.kvs.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskUsageTest {
  @Test
  void countsAllocatedBlocksNotFileSizes(@TempDir Path directory) throws IOException {
    Files.write(directory.resolve("dense"), new byte[64 * 1024]);
    Files.createDirectories(directory.resolve("sub"));
    // A sparse file: 64 MiB long, one block written.
    try (RandomAccessFile sparse =
        new RandomAccessFile(directory.resolve("sub/sparse").toFile(), "rw")) {
      sparse.setLength(64L << 20);
      sparse.write(new byte[4096]);
    }
    DiskUsage.Usage usage = DiskUsage.of(directory);
    assertThat(usage.files()).isEqualTo(2);
    assertThat(usage.apparentBytes()).isEqualTo((64 * 1024) + (64L << 20));
    assertThat(usage.allocatedBytes()).isBetween(64L * 1024, 1L << 20);
  }

  @Test
  void missingDirectoryTakesNoSpace(@TempDir Path directory) {
    assertThat(DiskUsage.of(directory.resolve("absent")).allocatedBytes()).isZero();
  }
}
