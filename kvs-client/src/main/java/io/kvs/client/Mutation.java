package io.kvs.client;

import java.util.Objects;

/**
 * One write of a batch ({@link KvsClient#writeAtomically}, {@link KvsClient#writeAll}): a put of
 * {@code value} under {@code key}, or a delete of {@code key}. The arrays are not copied: do not
 * change them until the write completes.
 */
public final class Mutation {
  private final byte[] key;
  private final byte[] value; // null: a delete

  private Mutation(byte[] key, byte[] value) {
    this.key = Objects.requireNonNull(key, "key");
    this.value = value;
  }

  /** Stores {@code value} under {@code key}. */
  public static Mutation put(byte[] key, byte[] value) {
    return new Mutation(key, Objects.requireNonNull(value, "value"));
  }

  /** Deletes {@code key}'s value. */
  public static Mutation delete(byte[] key) {
    return new Mutation(key, null);
  }

  public byte[] key() {
    return key;
  }

  /** The value a put stores; null for a delete. */
  public byte[] value() {
    return value;
  }

  public boolean isDelete() {
    return value == null;
  }
}
