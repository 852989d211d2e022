package io.kvs.core.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * ZooKeeper digest credentials ({@code user:password}): a process that has them authenticates its
 * session and creates the cluster's znodes writable by that identity only (docs/OPERATIONS.md,
 * "Security").
 *
 * @param user the digest user name
 * @param password its password
 */
public record ZooKeeperDigest(String user, String password) {
  public ZooKeeperDigest {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(password, "password");
    if (user.isEmpty() || user.contains(":") || password.isEmpty()) {
      throw new IllegalArgumentException("ZooKeeper digest credentials are user:password");
    }
  }

  /**
   * Reads {@code user:password} from the first line of {@code file}.
   *
   * @throws IllegalArgumentException if the file cannot be read or holds no {@code user:password}
   */
  public static ZooKeeperDigest read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8).lines().findFirst().orElse("").strip();
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot read the ZooKeeper digest file " + file + ": " + e);
    }
    int colon = text.indexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException(
          "the ZooKeeper digest file " + file + " must hold user:password");
    }
    return new ZooKeeperDigest(text.substring(0, colon), text.substring(colon + 1));
  }

  /** The bytes ZooKeeper's {@code digest} scheme authenticates with. */
  public byte[] authBytes() {
    return (user + ":" + password).getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return "ZooKeeperDigest[" + user + "]";
  }
}
