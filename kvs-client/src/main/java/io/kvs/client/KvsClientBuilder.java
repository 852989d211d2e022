package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.cluster.ClusterPaths;
import io.kvs.core.security.SecurityOptions;
import io.kvs.core.security.TlsOptions;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.ssl.SslContext;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link KvsClient}; {@link KvsClient#builder()} makes one. Only {@link #zookeeper}
 * is required:
 *
 * <pre>{@code
 * try (KvsClient client = KvsClient.builder()
 *     .zookeeper("127.0.0.1:2181")
 *     .cluster("default")
 *     .transport(Transport.TCP)
 *     .operationTimeout(Duration.ofSeconds(10))
 *     .build()) {
 *   client.put(key, value);
 * }
 * }</pre>
 *
 * Not thread-safe; a builder may build several clients.
 */
public final class KvsClientBuilder {
  /** The cluster name used unless {@link #cluster} sets another. */
  public static final String DEFAULT_CLUSTER = "default";

  /** The operation timeout used unless {@link #operationTimeout} sets another. */
  public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(10);

  /** The connect timeout used unless {@link #connectTimeout} sets another. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(30);

  /** The bound on operations in flight unless {@link #maxInFlight} sets another. */
  public static final int DEFAULT_MAX_IN_FLIGHT = 4096;

  private String zookeeper;
  private String cluster = DEFAULT_CLUSTER;
  private Transport transport = Transport.TCP;
  private Duration operationTimeout = DEFAULT_OPERATION_TIMEOUT;
  private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
  private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  private SecurityOptions security = SecurityOptions.none();
  private Path tlsTrustOnly;
  private MeterRegistry meterRegistry;

  KvsClientBuilder() {}

  /**
   * Credentials for a secured cluster (docs/OPERATIONS.md, "Security"): with TLS options, TCP
   * connections use TLS, trust the options' CA and present their certificate (for a client port
   * that requires mutual TLS); with a cluster secret, fabric connections prove it in their
   * bootstrap. Default {@link SecurityOptions#none()}: plain TCP, no secret.
   *
   * @param options the credentials
   * @return this builder
   */
  public KvsClientBuilder security(SecurityOptions options) {
    this.security = Objects.requireNonNull(options, "options");
    return this;
  }

  /**
   * TLS on TCP connections, trusting the CA certificates in {@code caPem} and presenting no client
   * certificate (enough for a client port without mutual TLS). {@link #security} with TLS options
   * takes precedence.
   *
   * @param caPem the cluster CA's certificate (PEM)
   * @return this builder
   */
  public KvsClientBuilder tlsTrust(Path caPem) {
    this.tlsTrustOnly = Objects.requireNonNull(caPem, "caPem");
    return this;
  }

  /**
   * The ZooKeeper ensemble holding the cluster's metadata, as a connect string ({@code
   * host:port[,host:port...]}). Required.
   *
   * @param connectString the ensemble's connect string
   * @return this builder
   */
  public KvsClientBuilder zookeeper(String connectString) {
    Objects.requireNonNull(connectString, "connectString");
    if (connectString.isBlank()) {
      throw new IllegalArgumentException("the ZooKeeper connect string is empty");
    }
    this.zookeeper = connectString;
    return this;
  }

  /**
   * The cluster's name: its metadata lives under {@code /kvs/<cluster>} in ZooKeeper. Default
   * {@value #DEFAULT_CLUSTER}.
   *
   * @param name the cluster's name
   * @return this builder
   * @throws IllegalArgumentException if the name is not {@code [A-Za-z0-9_.-]+}
   */
  public KvsClientBuilder cluster(String name) {
    new ClusterPaths(name); // checks the name
    this.cluster = name;
    return this;
  }

  /**
   * How to reach the region servers. Default {@link Transport#TCP}.
   *
   * @param transport the transport
   * @return this builder
   */
  public KvsClientBuilder transport(Transport transport) {
    this.transport = Objects.requireNonNull(transport, "transport");
    return this;
  }

  /**
   * How long an operation may go without progress before it fails: retries after redirections,
   * unreachable or overloaded servers, and a missing primary all happen within it. A scan or
   * multi-get that keeps making progress may take longer in total. Default 10 s.
   *
   * @param timeout at least 1 ms
   * @return this builder
   * @throws IllegalArgumentException if not positive
   */
  public KvsClientBuilder operationTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero() || timeout.toMillis() < 1) {
      throw new IllegalArgumentException("the operation timeout must be at least 1 ms: " + timeout);
    }
    this.operationTimeout = timeout;
    return this;
  }

  /**
   * How long {@link #build()} waits in all for ZooKeeper and the cluster's region map. Separate
   * from the operation timeout: a client started with a cluster (or on a loaded machine) may wait
   * longer for its first map than any one operation should. Default 30 s.
   *
   * @param timeout at least 1 ms
   * @return this builder
   * @throws IllegalArgumentException if not positive
   */
  public KvsClientBuilder connectTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero() || timeout.toMillis() < 1) {
      throw new IllegalArgumentException("the connect timeout must be at least 1 ms: " + timeout);
    }
    this.connectTimeout = timeout;
    return this;
  }

  /**
   * How many operations the client has in flight at most (each asynchronous call, and each blocking
   * one, holds one until it completes; a multi-get or scan counts once). A call made at the limit
   * waits for one to complete (backpressure on the caller), up to the operation timeout, then fails
   * with {@link NotAppliedException} (status OVERLOADED) without sending anything. Do not make
   * calls at the limit from the client's own callback threads: the completions they wait for may
   * need those threads. Default 4,096.
   *
   * @param operations at least 1
   * @return this builder
   * @throws IllegalArgumentException if not positive
   */
  public KvsClientBuilder maxInFlight(int operations) {
    if (operations < 1) {
      throw new IllegalArgumentException("maxInFlight must be at least 1: " + operations);
    }
    this.maxInFlight = operations;
    return this;
  }

  /**
   * Where the client records its meters ({@code kvs.client.operations}: a timer per operation and
   * outcome; {@code kvs.client.retries}: rounds retried; docs/OPERATIONS.md, "Metrics"). Default:
   * none, and the client measures nothing.
   *
   * @param registry the application's registry
   * @return this builder
   */
  public KvsClientBuilder meterRegistry(MeterRegistry registry) {
    this.meterRegistry = Objects.requireNonNull(registry, "registry");
    return this;
  }

  /**
   * Connects to ZooKeeper and loads the cluster's region map (waiting at most the connect timeout
   * in all), and returns the client. Connections to region servers are opened on first use.
   *
   * @return the client, to be closed
   * @throws IllegalStateException if no ZooKeeper connect string was set
   * @throws KvsException if ZooKeeper cannot be reached or the region map cannot be loaded in time,
   *     or the fabric transport was chosen and {@code kvs-native} is not on the class path
   */
  public KvsClient build() {
    if (zookeeper == null) {
      throw new IllegalStateException("set the ZooKeeper connect string with zookeeper(...)");
    }
    SslContext tls =
        security
            .tls()
            .map(TlsOptions::clientContext)
            .orElse(
                tlsTrustOnly == null ? null : TlsOptions.clientWithoutCertificate(tlsTrustOnly));
    return KvsClient.open(
        zookeeper,
        cluster,
        transport,
        operationTimeout,
        connectTimeout,
        maxInFlight,
        new ClientSecurity(security, tls),
        meterRegistry == null ? ClientMetrics.NONE : new ClientMetrics(meterRegistry));
  }
}
