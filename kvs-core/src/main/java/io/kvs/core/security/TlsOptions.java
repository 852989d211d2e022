package io.kvs.core.security;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import java.util.Objects;
import javax.net.ssl.SSLException;

/**
 * TLS settings of a process, all PEM files: its certificate chain and PKCS#8 private key (which it
 * presents as a server, and as a client when a server asks), and the CA certificates it trusts for
 * its peers. Servers built from these require client certificates when {@code requireClientAuth}
 * (mutual TLS; the control port always does). Immutable.
 *
 * @param certificate this process's certificate chain (PEM)
 * @param privateKey its private key (PEM, PKCS#8, unencrypted)
 * @param trustedCa the CA certificates peers' certificates must chain to (PEM)
 * @param requireClientAuth whether the client TCP port requires a client certificate signed by
 *     {@code trustedCa} (mutual TLS); false by default
 */
public record TlsOptions(
    Path certificate, Path privateKey, Path trustedCa, boolean requireClientAuth) {
  public TlsOptions {
    Objects.requireNonNull(certificate, "certificate");
    Objects.requireNonNull(privateKey, "privateKey");
    Objects.requireNonNull(trustedCa, "trustedCa");
  }

  /** A client that trusts {@code trustedCa} and presents no certificate of its own. */
  public static SslContext clientWithoutCertificate(Path trustedCa) {
    try {
      return SslContextBuilder.forClient().trustManager(trustedCa.toFile()).build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("TLS: cannot read the CA " + trustedCa + ": " + e, e);
    }
  }

  /**
   * The server side: this certificate and key, peers verified against the CA; client certificates
   * required if {@code mutual} (or {@link #requireClientAuth}).
   *
   * @throws IllegalArgumentException if a file is missing or not a PEM certificate or key
   */
  public SslContext serverContext(boolean mutual) {
    try {
      return SslContextBuilder.forServer(certificate.toFile(), privateKey.toFile())
          .trustManager(trustedCa.toFile())
          .clientAuth(mutual || requireClientAuth ? ClientAuth.REQUIRE : ClientAuth.NONE)
          .build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("TLS: cannot use " + describe() + ": " + e, e);
    }
  }

  /** The client side: trusts the CA (verifying the server's host name) and presents this cert. */
  public SslContext clientContext() {
    try {
      return SslContextBuilder.forClient()
          .keyManager(certificate.toFile(), privateKey.toFile())
          .trustManager(trustedCa.toFile())
          .build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("TLS: cannot use " + describe() + ": " + e, e);
    }
  }

  private String describe() {
    return "certificate " + certificate + ", key " + privateKey + ", CA " + trustedCa;
  }
}
