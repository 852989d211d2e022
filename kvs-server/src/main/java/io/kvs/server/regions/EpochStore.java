package io.kvs.server.regions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The highest epoch this server has accepted per region, persisted (fencing: a command or request
 * from an older epoch is refused even after a restart). One small properties file, replaced
 * atomically (write, fsync, rename, fsync the directory) on every raise.
 */
final class EpochStore {
  private final Path file;
  private final Map<Long, Long> epochs = new TreeMap<>();

  EpochStore(Path directory) {
    this.file = directory.resolve("epochs.properties");
    if (Files.exists(file)) {
      Properties stored = new Properties();
      try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
        stored.load(in);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + file, e);
      }
      for (String region : stored.stringPropertyNames()) {
        epochs.put(Long.parseLong(region), Long.parseLong(stored.getProperty(region)));
      }
    }
  }

  synchronized long highest(long regionId) {
    return epochs.getOrDefault(regionId, -1L);
  }

  /** Records {@code epoch} for {@code regionId} if higher than what is stored. */
  synchronized void raise(long regionId, long epoch) {
    if (epoch <= highest(regionId)) {
      return;
    }
    epochs.put(regionId, epoch);
    StringBuilder text = new StringBuilder("# highest epoch accepted per region\n");
    epochs.forEach((region, value) -> text.append(region).append('=').append(value).append('\n'));
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      try (FileChannel out =
          FileChannel.open(
              temporary,
              StandardOpenOption.CREATE,
              StandardOpenOption.WRITE,
              StandardOpenOption.TRUNCATE_EXISTING)) {
        out.write(java.nio.ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8)));
        out.force(true);
      }
      Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
      try (FileChannel directory = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
        directory.force(true);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot persist epochs in " + file, e);
    }
  }
}
