package io.kvs.server.regions;

import io.kvs.core.KeyValue;
import io.kvs.core.control.ControlCommand;
import io.kvs.engine.Region;
import io.kvs.engine.RegionIterator;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;

/**
 * A digest of every live pair of a region, read with one full scan: what two build-index replicas
 * of a region hold alike once the writes to them stopped.
 */
final class ScanDigest {
  private static final int PAIRS_PER_BATCH = 1024;
  private static final int BYTES_PER_BATCH = 4 << 20;

  private ScanDigest() {}

  /**
   * {@code digest}, {@code entries}, {@code levels} (0: a scan sees no levels) and {@code scope}.
   */
  static Map<String, Long> of(Region region) {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK lacks SHA-256", e);
    }
    long entries = 0;
    ByteBuffer lengths = ByteBuffer.allocate(8);
    try (RegionIterator iterator = region.newIterator(null)) {
      iterator.seekToFirst();
      while (iterator.isValid()) {
        List<KeyValue> pairs = iterator.nextPairs(PAIRS_PER_BATCH, BYTES_PER_BATCH);
        for (KeyValue pair : pairs) {
          // Lengths first, so no two different pair sequences hash the same bytes.
          lengths.clear();
          lengths.putInt(pair.key().length).putInt(pair.value().length);
          sha.update(lengths.array());
          sha.update(pair.key());
          sha.update(pair.value());
        }
        entries += pairs.size();
      }
    }
    long digest = ByteBuffer.wrap(sha.digest()).getLong();
    return Map.of(
        "digest", digest, "entries", entries, "levels", 0L, "scope", ControlCommand.DIGEST_SCAN);
  }
}
