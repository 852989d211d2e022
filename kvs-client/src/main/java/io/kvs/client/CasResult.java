package io.kvs.client;

import java.util.Arrays;
import java.util.Optional;

/**
 * What a conditional write ({@link KvsClient#compareAndSet}, {@link KvsClient#putIfAbsent}, {@link
 * KvsClient#deleteIfEquals}) found: it was applied, or it was not and the key held {@link
 * #current()} (empty: no value) when the primary decided.
 */
public final class CasResult {
  private static final CasResult APPLIED = new CasResult(true, null);

  private final boolean applied;
  private final byte[] current;

  private CasResult(boolean applied, byte[] current) {
    this.applied = applied;
    this.current = current;
  }

  static CasResult applied() {
    return APPLIED;
  }

  static CasResult notApplied(byte[] current) {
    return new CasResult(false, current);
  }

  /** Whether the write was made. */
  public boolean isApplied() {
    return applied;
  }

  /** Not applied: the key's value when the primary decided (empty: none); applied: empty. */
  public Optional<byte[]> current() {
    return Optional.ofNullable(current).map(byte[]::clone);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof CasResult that
        && applied == that.applied
        && Arrays.equals(current, that.current);
  }

  @Override
  public int hashCode() {
    return 31 * Boolean.hashCode(applied) + Arrays.hashCode(current);
  }

  @Override
  public String toString() {
    return applied
        ? "applied"
        : current == null ? "not applied (no value)" : "not applied (" + current.length + " bytes)";
  }
}
