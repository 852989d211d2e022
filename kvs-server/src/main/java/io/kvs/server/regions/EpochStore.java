package io.kvs.server.regions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The highest epoch this server has accepted per region, persisted (fencing: a command or request
 * from an older epoch is refused even after a restart); {@link #raise} returns once the disk holds
 * the raise. Raises made while one is being written go to disk together with the next write (a
 * group commit): the control lanes open regions side by side.
 *
 * <p>The file ({@code epochs.dat}) is written in place, so that a raise needs no free block: a
 * server whose disk is full must still take the epochs the master raises, or none of its regions
 * can be reopened until space returns (the 60-minute chaos profile of session 5 found a server at
 * epoch 121 of a region the map had at 122 for 300 s). The file is made once, at its full size,
 * with written (not preallocated) blocks, and holds two slots of equal size; each raise writes the
 * slot the newest valid copy is not in and syncs it (fdatasync: the file's size never changes).
 * Slot: {@code "KVSEPOCH"}, u64 sequence, u32 count, u32 CRC32C (of the slot's first {@code 24 + 16
 * * count} bytes with this field zero), then count pairs (i64 region, i64 epoch), little-endian.
 * Loading takes the valid slot with the highest sequence, so a write torn by a crash leaves the
 * copy before it. A store that outgrows its slots is rewritten at twice the size (a new file,
 * synced and renamed over the old one; this needs free space). Read once at start from the older
 * {@code epochs.properties} if that is all there is.
 */
final class EpochStore {
  static final String FILE = "epochs.dat";
  private static final String LEGACY = "epochs.properties";
  private static final byte[] MAGIC = "KVSEPOCH".getBytes(StandardCharsets.US_ASCII);
  private static final int HEADER = 24;
  private static final int PAIR = 16;
  private static final int BLOCK = 4096;

  /** Regions a new file has room for (two slots of 16 KiB; 10,000 regions take 160 KiB each). */
  static final int INITIAL_CAPACITY = 1_000;

  private final Path file;
  private final Map<Long, Long> epochs = new TreeMap<>(); // guarded by this
  private long version; // guarded by this: raised at every change of epochs
  private final Object writing = new Object(); // held while the file is written
  private long persisted; // guarded by writing: the version the file holds
  private long sequence; // guarded by writing: the newest valid slot's sequence
  private int slotBytes; // guarded by writing

  /**
   * Loads the store of {@code directory}, making its file if there is none.
   *
   * @throws UncheckedIOException if the file cannot be read or made, or neither slot is valid (the
   *     server then refuses to start: it no longer knows which epochs it accepted)
   */
  EpochStore(Path directory) {
    this.file = directory.resolve(FILE);
    try {
      if (Files.exists(file)) {
        load();
      } else {
        Path legacy = directory.resolve(LEGACY);
        if (Files.exists(legacy)) {
          loadLegacy(legacy);
        }
        create(capacityFor(epochs.size()), 0);
        Files.deleteIfExists(legacy); // the new file holds what it held
        syncDirectory();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot load the epochs in " + file, e);
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
        return; // a write made meanwhile holds it
      }
      Map<Long, Long> snapshot;
      long writes;
      synchronized (this) {
        snapshot = new TreeMap<>(epochs);
        writes = version;
      }
      try {
        if (HEADER + (long) PAIR * snapshot.size() > slotBytes) {
          create(capacityFor(snapshot.size()), sequence + 1, snapshot);
        } else {
          writeSlot(snapshot, sequence + 1);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot persist epochs in " + file, e);
      }
      persisted = writes;
    }
  }

  private static int capacityFor(int regions) {
    return Math.max(INITIAL_CAPACITY, 2 * regions);
  }

  private void writeSlot(Map<Long, Long> snapshot, long next) throws IOException {
    ByteBuffer slot = encode(snapshot, next, HEADER + PAIR * snapshot.size());
    try (FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE)) {
      long position = (next % 2) * slotBytes;
      while (slot.hasRemaining()) {
        position += out.write(slot, position);
      }
      out.force(false);
    }
    sequence = next;
  }

  private void create(int capacity, long first) throws IOException {
    synchronized (this) {
      create(capacity, first, new TreeMap<>(epochs));
    }
  }

  /**
   * Writes a new file of two slots for {@code capacity} regions, both holding {@code snapshot} at
   * sequence {@code first}, and renames it over the old one.
   */
  private void create(int capacity, long first, Map<Long, Long> snapshot) throws IOException {
    int size = roundUp(HEADER + PAIR * capacity);
    ByteBuffer slot = encode(snapshot, first, size);
    Path temporary = file.resolveSibling(FILE + ".tmp");
    try (FileChannel out =
        FileChannel.open(
            temporary,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      for (int copy = 0; copy < 2; copy++) {
        ByteBuffer each = slot.duplicate();
        long position = (long) copy * size;
        while (each.hasRemaining()) {
          position += out.write(each, position);
        }
      }
      out.force(true);
    }
    Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
    syncDirectory();
    slotBytes = size;
    sequence = first;
  }

  private static int roundUp(int bytes) {
    return (bytes + BLOCK - 1) / BLOCK * BLOCK;
  }

  /** A slot of {@code size} bytes (zeros past the pairs) holding {@code snapshot}. */
  private static ByteBuffer encode(Map<Long, Long> snapshot, long sequence, int size) {
    ByteBuffer slot = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    slot.put(MAGIC).putLong(sequence).putInt(snapshot.size()).putInt(0);
    snapshot.forEach((region, epoch) -> slot.putLong(region).putLong(epoch));
    CRC32C crc = new CRC32C();
    crc.update(slot.array(), 0, HEADER + PAIR * snapshot.size());
    slot.putInt(20, (int) crc.getValue());
    return slot.clear();
  }

  private void load() throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    if (bytes.length == 0 || bytes.length % (2 * BLOCK) != 0) {
      throw new IOException(
          "corrupt epoch store: " + bytes.length + " bytes, not two slots of whole blocks");
    }
    int size = bytes.length / 2;
    long best = -1;
    int bestSlot = -1;
    for (int copy = 0; copy < 2; copy++) {
      long found = validSequence(ByteBuffer.wrap(bytes, copy * size, size).slice(), size);
      if (found > best) {
        best = found;
        bestSlot = copy;
      }
    }
    if (bestSlot < 0) {
      throw new IOException("corrupt epoch store: neither of its two slots passes its checksum");
    }
    ByteBuffer slot =
        ByteBuffer.wrap(bytes, bestSlot * size, size).slice().order(ByteOrder.LITTLE_ENDIAN);
    int count = slot.getInt(16);
    for (int i = 0; i < count; i++) {
      epochs.put(slot.getLong(HEADER + PAIR * i), slot.getLong(HEADER + PAIR * i + 8));
    }
    slotBytes = size;
    sequence = best;
  }

  /** The sequence of the slot in {@code slot}, or -1 if it is not a valid one. */
  private static long validSequence(ByteBuffer slot, int size) {
    slot.order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[MAGIC.length];
    slot.get(0, magic);
    int count = slot.getInt(16);
    if (!java.util.Arrays.equals(magic, MAGIC) || count < 0 || count > (size - HEADER) / PAIR) {
      return -1;
    }
    byte[] covered = new byte[HEADER + PAIR * count];
    slot.get(0, covered);
    covered[20] = covered[21] = covered[22] = covered[23] = 0;
    CRC32C crc = new CRC32C();
    crc.update(covered);
    return (int) crc.getValue() == slot.getInt(20) ? slot.getLong(8) : -1;
  }

  private void loadLegacy(Path legacy) throws IOException {
    Properties stored = new Properties();
    try (var in = Files.newBufferedReader(legacy, StandardCharsets.UTF_8)) {
      stored.load(in);
    }
    for (String region : stored.stringPropertyNames()) {
      epochs.put(Long.parseLong(region), Long.parseLong(stored.getProperty(region)));
    }
  }

  private void syncDirectory() throws IOException {
    try (FileChannel directory = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
      directory.force(true);
    }
  }
}
