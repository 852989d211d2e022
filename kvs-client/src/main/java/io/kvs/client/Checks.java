package io.kvs.client;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.WireCodec;
import java.util.Objects;

/**
 * The protocol's limits (docs/PROTOCOL.md, "Limits"), checked before anything is sent, with the
 * statuses a server would answer: INVALID_ARGUMENT for an empty key, TOO_LARGE for a key or value
 * above its limit.
 */
final class Checks {
  private Checks() {}

  /** A key: 1 to 4,096 bytes. */
  static void key(byte[] key, String what) {
    Objects.requireNonNull(key, what);
    if (key.length == 0) {
      throw new InvalidRequestException(StatusCode.INVALID_ARGUMENT, what + " is empty");
    }
    bound(key, what);
  }

  /** A scan bound: at most 4,096 bytes, empty allowed. */
  static void bound(byte[] key, String what) {
    Objects.requireNonNull(key, what);
    if (key.length > WireCodec.KEY_BYTES_MAX) {
      throw new InvalidRequestException(
          StatusCode.TOO_LARGE,
          what
              + " of "
              + key.length
              + " bytes exceeds the limit of "
              + WireCodec.KEY_BYTES_MAX
              + " bytes");
    }
  }

  /** A value: at most 1 MiB. */
  static void value(byte[] value) {
    Objects.requireNonNull(value, "value");
    if (value.length > WireCodec.VALUE_BYTES_MAX) {
      throw new InvalidRequestException(
          StatusCode.TOO_LARGE,
          "value of "
              + value.length
              + " bytes exceeds the limit of "
              + WireCodec.VALUE_BYTES_MAX
              + " bytes (1 MiB)");
    }
  }

  /** A scan limit: at least 1. */
  static void limit(int limit) {
    if (limit < 1) {
      throw new InvalidRequestException(
          StatusCode.INVALID_ARGUMENT, "scan limit must be at least 1: " + limit);
    }
  }
}
