package io.kvs.core.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway certificate authority in a directory, for {@code ./kvs local start --tls} and tests:
 * {@code ca.pem} and, per process name, {@code <name>.pem} and {@code <name>.key} (P-256, signed by
 * the CA, valid 30 days for 127.0.0.1 and localhost, for servers and clients alike), made with the
 * {@code openssl} command. Never for production: the CA's key lies next to the certificates.
 */
public final class ThrowawayCertificates {
  private static final long OPENSSL_TIMEOUT_SECONDS = 60;

  private final Path dir;

  /** Certificates in {@code dir}. */
  public ThrowawayCertificates(Path dir) {
    this.dir = dir;
  }

  /** The CA certificate (PEM). */
  public Path authority() {
    return dir.resolve("ca.pem");
  }

  /** Makes a new CA, replacing whatever the directory held. */
  public void createAuthority() throws IOException {
    delete();
    Files.createDirectories(dir);
    openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        dir.resolve("ca.key").toString(),
        "-out",
        authority().toString(),
        "-days",
        "30",
        "-subj",
        "/CN=KVS local cluster CA");
    Files.writeString(
        dir.resolve("extensions.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n" + "extendedKeyUsage=serverAuth,clientAuth\n",
        StandardCharsets.UTF_8);
  }

  /** Removes the CA and every certificate (a cluster started without TLS). */
  public void delete() throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(file);
      }
    }
  }

  /** The TLS options of process {@code name}, making its certificate if it has none yet. */
  public TlsOptions options(String name, boolean mutual) {
    Path certificate = dir.resolve(name + ".pem");
    Path key = dir.resolve(name + ".key");
    if (!Files.exists(certificate)) {
      try {
        Path request = dir.resolve(name + ".csr");
        openssl(
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            key.toString(),
            "-out",
            request.toString(),
            "-subj",
            "/CN=" + name);
        openssl(
            "x509",
            "-req",
            "-in",
            request.toString(),
            "-CA",
            authority().toString(),
            "-CAkey",
            dir.resolve("ca.key").toString(),
            "-CAcreateserial",
            "-out",
            certificate.toString(),
            "-days",
            "30",
            "-extfile",
            dir.resolve("extensions.cnf").toString());
        Files.delete(request);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot make the certificate of " + name, e);
      }
    }
    return new TlsOptions(certificate, key, authority(), mutual);
  }

  /** The command-line flags giving process {@code name} its certificate. */
  public List<String> flags(String name, boolean mutual) {
    TlsOptions tls = options(name, mutual);
    return SecurityOptions.flags(
        null, null, tls.certificate(), tls.privateKey(), tls.trustedCa(), mutual);
  }

  private void openssl(String... arguments) throws IOException {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(arguments));
    Path log = dir.resolve("openssl.log");
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    try {
      if (!process.waitFor(OPENSSL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException("openssl did not finish within " + OPENSSL_TIMEOUT_SECONDS + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted running openssl", e);
    }
    if (process.exitValue() != 0) {
      throw new IOException("openssl " + String.join(" ", arguments) + " failed; see " + log);
    }
  }
}
