package io.kvs.core.wire;

import java.util.Objects;

/**
 * One write of a BATCH request (docs/PROTOCOL.md): a put of {@code value} under {@code key}, or
 * with a null value a delete of {@code key}. Byte arrays are not copied.
 *
 * @param key 1 to 4,096 bytes
 * @param value up to 1 MiB; null: delete the key
 */
public record BatchWrite(byte[] key, byte[] value) {
  public BatchWrite {
    Objects.requireNonNull(key, "key");
  }

  /** Whether this write is a put (else a delete). */
  public boolean put() {
    return value != null;
  }
}
