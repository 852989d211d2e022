package io.kvs.tools.demo;

/**
 * What each demo key should hold: the version last acknowledged, or "uncertain" after a write that
 * failed (it may or may not have been applied, so any version of the key is right). Each key is
 * written by one thread at a time (the loader, then the workload thread owning it); readers of keys
 * they do not own check only that a value is some version of its key.
 */
final class Expected {
  private final int[] versions;
  private final boolean[] uncertain;

  Expected(int keys) {
    versions = new int[keys];
    uncertain = new boolean[keys];
  }

  int keys() {
    return versions.length;
  }

  int version(int key) {
    return versions[key];
  }

  /** The write of {@code version} to {@code key} was acknowledged. */
  void written(int key, int version) {
    versions[key] = version;
    uncertain[key] = false;
  }

  /**
   * A write to {@code key} failed: from now on any version (or none, before the first) is right.
   */
  void failed(int key, int version) {
    versions[key] = Math.max(versions[key], version);
    uncertain[key] = true;
  }

  /**
   * Whether {@code value} (null: the key has none) is right for {@code key}: exactly the version
   * last written if {@code exact}, otherwise any version of that key.
   */
  boolean matches(int key, byte[] value, boolean exact) {
    if (value == null) {
      return uncertain[key] && versions[key] == 0;
    }
    int version = DemoData.versionOf(key, value);
    if (version < 0) {
      return false;
    }
    return !exact || uncertain[key] || version == versions[key];
  }
}
