package io.kvs.bench.chaos;

import io.kvs.tools.fault.NetworkCut;
import io.kvs.tools.fault.SystemCommand;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether every fault kind can run on this machine, before anything starts: a kind that cannot run
 * fails the campaign with the reason, never skipped. (A loop device is proven when the disks are
 * made, at the cluster's start, which fails as clearly.)
 */
final class Preflight {
  private Preflight() {}

  /** What cannot run and why, one line per kind; empty when every kind can. */
  static List<String> problems() {
    List<String> problems = new ArrayList<>();
    if (!"root".equals(System.getProperty("user.name"))) {
      problems.add(
          "every kind that changes the host (zookeeper-cut, replication-cut, disk-full) needs"
              + " root: run ./kvs chaos as root");
      return problems;
    }
    Optional<String> cut = NetworkCut.unavailable();
    cut.ifPresent(
        why -> problems.add("zookeeper-cut and replication-cut cannot cut traffic here: " + why));
    for (String command : List.of("losetup", "mkfs.ext4", "mount", "umount", "fallocate")) {
      missing(command).ifPresent(why -> problems.add("disk-full needs " + command + ": " + why));
    }
    missing("kill")
        .ifPresent(why -> problems.add("server-pause and master-pause need kill(1): " + why));
    return problems;
  }

  private static Optional<String> missing(String command) {
    try {
      SystemCommand.Result which = SystemCommand.run("sh", "-c", "command -v " + command);
      return which.ok() ? Optional.empty() : Optional.of("not found on the PATH");
    } catch (IOException e) {
      return Optional.of(e.getMessage());
    }
  }
}
