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
 * atomically (write, fsync, rename, fsync the directory); {@link #raise} returns once the file
 * holds the raise. Raises made while a replacement is being written go to disk together in the next
 * one (a group commit): the control lanes open regions side by side, and a promotion's opens waited
 * behind each other's two fsyncs (up to 0.47 s of an open on a busy disk).
 */
final class EpochStore {
  private final Path file;
  private final Map<Long, Long> epochs = new TreeMap<>(); // guarded by this
  private long version; // guarded by this: raised at every change of epochs
  private final Object writing = new Object(); // held while the file is replaced
  private long persisted; // guarded by writing: the version the file holds

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

  /**
   * Records {@code epoch} for {@code regionId} if higher than what is stored; returns once it is on
   * disk (with every raise made before it).
   *
   * @throws UncheckedIOException if the file cannot be written (the raise then holds in memory
   *     only; a later raise writes it again)
   */
  void raise(long regionId, long epoch) {
    long wanted;
    synchronized (this) {
      if (epoch > highest(regionId)) {
        epochs.put(regionId, epoch);
        version++;
      }
      wanted = version;
    }
    synchronized (writing) {
      if (persisted >= wanted) {
        return; // a replacement written meanwhile holds it
      }
      String text;
      long writes;
      synchronized (this) {
        StringBuilder builder = new StringBuilder("# highest epoch accepted per region\n");
        epochs.forEach(
            (region, value) -> builder.append(region).append('=').append(value).append('\n'));
        text = builder.toString();
        writes = version;
      }
      replace(text);
      persisted = writes;
    }
  }

  private void replace(String text) {
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      try (FileChannel out =
          FileChannel.open(
              temporary,
              StandardOpenOption.CREATE,
              StandardOpenOption.WRITE,
              StandardOpenOption.TRUNCATE_EXISTING)) {
        out.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
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
