package io.kvs.core.cluster;

import java.util.Locale;

/** How a region's writes reach its backups. */
public enum ReplicationMode {
  /** No backups: a region lives on its primary only. */
  NONE("none"),
  /**
   * Backups receive the value log and insert what they receive into their own engine (own L0, own
   * compactions): the classic design, every replica compacts.
   */
  BUILD_INDEX("build-index"),
  /**
   * Backups keep copies of the primary's log segments and install the index segments its
   * compactions build, rewriting their device pointers: compaction runs once per replica group
   * (Tebis' Send-Index). The default.
   */
  SEND_INDEX("send-index");

  private final String configName;

  ReplicationMode(String configName) {
    this.configName = configName;
  }

  /** Whether a primary sends its writes to backups in this mode. */
  public boolean replicates() {
    return this != NONE;
  }

  /** The name in configuration and on the command line. */
  public String configName() {
    return configName;
  }

  /** The mode named {@code name} ({@code none}, {@code build-index}, {@code send-index}). */
  public static ReplicationMode fromConfigName(String name) {
    for (ReplicationMode mode : values()) {
      if (mode.configName.equals(name.toLowerCase(Locale.ROOT))) {
        return mode;
      }
    }
    throw new IllegalArgumentException(
        "unknown replication mode " + name + " (none, build-index, send-index)");
  }
}
