package io.kvs.tools.fault;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A small file system of its own for one directory, so that the directory can be made full: a
 * sparse image file attached to a loop device ({@code losetup}), formatted ext4 without blocks
 * reserved for root ({@code mkfs.ext4 -m 0}: the processes run as root) and mounted on the
 * directory. {@link #fill()} takes every free block with a filler file, {@link #unfill()} deletes
 * it. {@link #close()} unmounts, detaches and deletes the image; a disk left behind by a run that
 * died is found by {@link #cleanLeftovers}.
 *
 * <p>Needs root, {@code losetup}, {@code mkfs.ext4}, {@code mount} and a free loop device.
 */
public final class LoopDisk implements AutoCloseable {
  /** The filler's name in the mounted directory. */
  public static final String FILLER = "chaos-filler";

  /** Bound on the blocks a top-up writes after the filler's fallocate (4 KiB each). */
  private static final int TOP_UP_BLOCKS_MAX = 65_536;

  private final Path image;
  private final Path mountPoint;
  private final String device;
  private boolean mounted;
  private boolean closed;

  private LoopDisk(Path image, Path mountPoint, String device) {
    this.image = image;
    this.mountPoint = mountPoint;
    this.device = device;
  }

  /**
   * Makes a file system of {@code bytes} in {@code image} and mounts it on {@code mountPoint}
   * (created if missing, and empty).
   *
   * @throws IOException naming the step that failed; whatever was done is undone
   */
  public static LoopDisk create(Path image, Path mountPoint, long bytes) throws IOException {
    Files.createDirectories(image.toAbsolutePath().getParent());
    Files.createDirectories(mountPoint);
    Files.deleteIfExists(image);
    try (FileChannel file =
        FileChannel.open(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      file.truncate(0);
      file.write(ByteBuffer.allocate(1), bytes - 1); // sparse: blocks come as they are written
    }
    String device;
    try {
      device = SystemCommand.require("losetup", "--find", "--show", image.toString()).trim();
    } catch (IOException e) {
      Files.deleteIfExists(image);
      throw new IOException("cannot attach a loop device (losetup): " + e.getMessage(), e);
    }
    LoopDisk disk = new LoopDisk(image, mountPoint, device);
    try {
      SystemCommand.require("mkfs.ext4", "-q", "-F", "-m", "0", device);
      SystemCommand.require("mount", device, mountPoint.toString());
      disk.mounted = true;
    } catch (IOException e) {
      try {
        disk.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return disk;
  }

  /** The mounted directory. */
  public Path mountPoint() {
    return mountPoint;
  }

  /** The loop device, e.g. {@code /dev/loop3}. */
  public String device() {
    return device;
  }

  /** Bytes free on the file system now. */
  public long freeBytes() throws IOException {
    return Files.getFileStore(mountPoint).getUsableSpace();
  }

  /**
   * Takes every free block with the filler: one fallocate of what is free, then 4 KiB writes until
   * the file system refuses more. Returns the filler's size.
   */
  public long fill() throws IOException {
    Path filler = mountPoint.resolve(FILLER);
    FileStore store = Files.getFileStore(mountPoint);
    long free = store.getUsableSpace();
    // Leave a little for the fallocate's own extent metadata; the top-up takes the rest.
    long first = Math.max(0, free - (1 << 20));
    if (first > 0) {
      SystemCommand.require("fallocate", "-l", Long.toString(first), filler.toString());
    }
    ByteBuffer block = ByteBuffer.allocate(4096);
    try (FileChannel file =
        FileChannel.open(
            filler,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.APPEND)) {
      for (int i = 0; i < TOP_UP_BLOCKS_MAX; i++) {
        block.clear();
        file.write(block);
        file.force(false); // the block must be allocated now, not at writeback
      }
    } catch (IOException full) {
      if (!String.valueOf(full.getMessage()).contains("No space left")) {
        throw full;
      }
    }
    return Files.size(filler);
  }

  /** Deletes the filler (nothing if there is none). */
  public void unfill() throws IOException {
    Files.deleteIfExists(mountPoint.resolve(FILLER));
  }

  /** Unmounts, detaches the loop device and deletes the image; idempotent. */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    IOException failure = null;
    if (mounted) {
      SystemCommand.Result result =
          SystemCommand.run(
              SystemCommand.DEFAULT_TIMEOUT, List.of("umount", mountPoint.toString()));
      if (!result.ok()) {
        failure = new IOException("cannot unmount " + mountPoint + ": " + result.output());
        // Lazily, so that the device goes once the last user of the mount is gone.
        SystemCommand.run(
            SystemCommand.DEFAULT_TIMEOUT, List.of("umount", "-l", mountPoint.toString()));
      }
    }
    SystemCommand.Result detached =
        SystemCommand.run(SystemCommand.DEFAULT_TIMEOUT, List.of("losetup", "-d", device));
    if (!detached.ok() && failure == null) {
      failure = new IOException("cannot detach " + device + ": " + detached.output());
    }
    Files.deleteIfExists(image);
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Unmounts whatever is mounted under {@code directory} and detaches the loop devices whose
   * backing files lie under it: what a run that died left behind. Returns what it undid.
   */
  public static List<String> cleanLeftovers(Path directory) throws IOException {
    List<String> undone = new ArrayList<>();
    String prefix = directory.toAbsolutePath().normalize() + "/";
    for (String line : Files.readAllLines(Path.of("/proc/mounts"), StandardCharsets.UTF_8)) {
      String[] fields = line.split(" ");
      if (fields.length > 1 && (fields[1] + "/").startsWith(prefix)) {
        SystemCommand.Result result =
            SystemCommand.run(SystemCommand.DEFAULT_TIMEOUT, List.of("umount", "-l", fields[1]));
        undone.add("unmounted " + fields[1] + (result.ok() ? "" : " (" + result.output() + ")"));
      }
    }
    SystemCommand.Result list =
        SystemCommand.run(
            SystemCommand.DEFAULT_TIMEOUT,
            List.of("losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"));
    if (list.ok()) {
      for (String line : list.output().split("\n")) {
        String[] fields = line.trim().split("\\s+", 2);
        if (fields.length == 2 && fields[1].startsWith(prefix)) {
          SystemCommand.Result result =
              SystemCommand.run(SystemCommand.DEFAULT_TIMEOUT, List.of("losetup", "-d", fields[0]));
          undone.add("detached " + fields[0] + (result.ok() ? "" : " (" + result.output() + ")"));
        }
      }
    }
    return undone;
  }
}
