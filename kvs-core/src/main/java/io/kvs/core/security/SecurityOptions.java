package io.kvs.core.security;

import io.kvs.core.cli.Flags;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * How a process authenticates and encrypts (docs/OPERATIONS.md, "Security"): each part is optional
 * and off by default. Immutable.
 *
 * @param secret the cluster secret, the credential of the cluster's own processes: authenticates
 *     the control RPC (commands: open, close, ...) and replicating peers at the fabric bootstrap.
 *     Servers, masters and admin tools hold it; applications never need it
 * @param clientSecret the client secret, the credential of applications: clients prove it on the
 *     client TCP port and at the fabric bootstrap to read and write data. It never opens, closes or
 *     replicates anything
 * @param tls TLS on the client TCP port and the control RPC
 * @param zookeeper digest credentials for ZooKeeper, which then guards the cluster's znodes with
 *     ACLs
 */
public record SecurityOptions(
    Optional<ClusterSecret> secret,
    Optional<ClusterSecret> clientSecret,
    Optional<TlsOptions> tls,
    Optional<ZooKeeperDigest> zookeeper) {
  /** The command-line flags {@link #fromFlags} reads (names without dashes). */
  public static final Set<String> FLAG_NAMES =
      Set.of(
          "secret-file",
          "client-secret-file",
          "tls-cert",
          "tls-key",
          "tls-ca",
          "tls-client-auth",
          "zookeeper-digest-file");

  private static final SecurityOptions NONE =
      new SecurityOptions(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

  /** Nothing authenticated, nothing encrypted: anyone who reaches a port is served. */
  public static SecurityOptions none() {
    return NONE;
  }

  /** Only the cluster secret (control RPC and replicating peers authenticated). */
  public static SecurityOptions withSecret(ClusterSecret secret) {
    return NONE.withClusterSecret(secret);
  }

  /** These options with the cluster secret {@code newSecret}. */
  public SecurityOptions withClusterSecret(ClusterSecret newSecret) {
    return new SecurityOptions(Optional.of(newSecret), clientSecret, tls, zookeeper);
  }

  /** These options with the client secret {@code newSecret} (what clients prove). */
  public SecurityOptions withClientSecret(ClusterSecret newSecret) {
    return new SecurityOptions(secret, Optional.of(newSecret), tls, zookeeper);
  }

  /** These options with {@code newTls}. */
  public SecurityOptions withTls(TlsOptions newTls) {
    return new SecurityOptions(secret, clientSecret, Optional.of(newTls), zookeeper);
  }

  /** These options with ZooKeeper credentials. */
  public SecurityOptions withZooKeeper(ZooKeeperDigest digest) {
    return new SecurityOptions(secret, clientSecret, tls, Optional.of(digest));
  }

  /** Whether control commands need a proof of the secret or a certificate from the cluster CA. */
  public boolean authenticatesControl() {
    return secret.isPresent() || tls.isPresent();
  }

  /**
   * Reads {@code --secret-file FILE} (the cluster secret), {@code --client-secret-file FILE},
   * {@code --tls-cert PEM --tls-key PEM --tls-ca PEM [--tls-client-auth none|require]} and {@code
   * --zookeeper-digest-file FILE} (user:password).
   *
   * @throws IllegalArgumentException for an unreadable file or an incomplete TLS setting
   */
  public static SecurityOptions fromFlags(Flags flags) {
    Optional<ClusterSecret> secret =
        flags.has("secret-file")
            ? Optional.of(ClusterSecret.read(Path.of(flags.require("secret-file"))))
            : Optional.empty();
    Optional<ClusterSecret> clientSecret =
        flags.has("client-secret-file")
            ? Optional.of(ClusterSecret.read(Path.of(flags.require("client-secret-file"))))
            : Optional.empty();
    Optional<TlsOptions> tls = Optional.empty();
    boolean anyTls =
        flags.has("tls-cert")
            || flags.has("tls-key")
            || flags.has("tls-ca")
            || flags.has("tls-client-auth");
    if (anyTls) {
      if (!flags.has("tls-cert") || !flags.has("tls-key") || !flags.has("tls-ca")) {
        throw new IllegalArgumentException("TLS needs all of --tls-cert, --tls-key and --tls-ca");
      }
      String clientAuth = flags.get("tls-client-auth", "none");
      if (!clientAuth.equals("none") && !clientAuth.equals("require")) {
        throw new IllegalArgumentException(
            "--tls-client-auth is none or require, not " + clientAuth);
      }
      tls =
          Optional.of(
              new TlsOptions(
                  Path.of(flags.require("tls-cert")),
                  Path.of(flags.require("tls-key")),
                  Path.of(flags.require("tls-ca")),
                  clientAuth.equals("require")));
    }
    Optional<ZooKeeperDigest> zookeeper =
        flags.has("zookeeper-digest-file")
            ? Optional.of(ZooKeeperDigest.read(Path.of(flags.require("zookeeper-digest-file"))))
            : Optional.empty();
    return new SecurityOptions(secret, clientSecret, tls, zookeeper);
  }

  /**
   * What a client or tool needs to talk to the local cluster in {@code dir} ({@code ./kvs local
   * start}): its cluster secret ({@code dir/secret}) and client secret ({@code dir/client-secret})
   * where it has them (a client uses only the latter, an admin tool the former), and if it runs
   * with TLS ({@code dir/tls/}) the certificate named {@code name} from its throwaway CA, made if
   * missing.
   */
  public static SecurityOptions forClusterDirectory(Path dir, String name) {
    Path secretFile = dir.resolve("secret");
    Path clientSecretFile = dir.resolve("client-secret");
    SecurityOptions security = none();
    if (java.nio.file.Files.exists(secretFile)) {
      security = security.withClusterSecret(ClusterSecret.read(secretFile));
    }
    if (java.nio.file.Files.exists(clientSecretFile)) {
      security = security.withClientSecret(ClusterSecret.read(clientSecretFile));
    }
    Path tlsDir = dir.resolve("tls");
    return java.nio.file.Files.exists(tlsDir.resolve("ca.pem"))
        ? security.withTls(new ThrowawayCertificates(tlsDir).options(name, false))
        : security;
  }

  /**
   * The flags that give another process these options, given the files they came from: for
   * launchers, which know the files.
   */
  public static List<String> flags(
      Path secretFile,
      Path clientSecretFile,
      Path certificate,
      Path privateKey,
      Path trustedCa,
      boolean mutual) {
    List<String> args = new ArrayList<>();
    if (secretFile != null) {
      args.addAll(List.of("--secret-file", secretFile.toString()));
    }
    if (clientSecretFile != null) {
      args.addAll(List.of("--client-secret-file", clientSecretFile.toString()));
    }
    if (certificate != null) {
      args.addAll(
          List.of(
              "--tls-cert",
              certificate.toString(),
              "--tls-key",
              privateKey.toString(),
              "--tls-ca",
              trustedCa.toString(),
              "--tls-client-auth",
              mutual ? "require" : "none"));
    }
    return args;
  }
}
