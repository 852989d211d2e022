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
  BUILD_INDEX("build-index");

  private final String configName;

  ReplicationMode(String configName) {
    this.configName = configName;
  }

  /** The name in configuration and on the command line. */
  public String configName() {
    return configName;
  }

  /** The mode named {@code name} ({@code none}, {@code build-index}). */
  public static ReplicationMode fromConfigName(String name) {
    for (ReplicationMode mode : values()) {
      if (mode.configName.equals(name.toLowerCase(Locale.ROOT))) {
        return mode;
      }
    }
    throw new IllegalArgumentException("unknown replication mode " + name + " (none, build-index)");
  }
}
