package io.kvs.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.ClosedException;
import io.kvs.core.InvalidRequestException;
import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.RegionState;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Building, validating requests, closing, and the optional native dependency. */
class KvsClientLifecycleTest extends ClusterTestBase {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private long tcpRequests() {
    return cluster.server("s1").tcpRequests()
        + cluster.server("s2").tcpRequests()
        + cluster.server("s3").tcpRequests();
  }

  private static void assertInvalid(ThrowingCallable call, StatusCode status, String message) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            InvalidRequestException.class, e -> assertThat(e.status()).isEqualTo(status))
        .hasMessageContaining(message);
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void requestsBeyondTheLimitsFailBeforeAnythingIsSent(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, TIMEOUT);
    long before = tcpRequests();
    byte[] longKey = new byte[4097];
    byte[] bigValue = new byte[(1 << 20) + 1];

    assertInvalid(() -> client.put(longKey, bytes("v")), StatusCode.TOO_LARGE, "key of 4097 bytes");
    assertInvalid(() -> client.put(bytes("k"), bigValue), StatusCode.TOO_LARGE, "1048577 bytes");
    assertInvalid(() -> client.put(new byte[0], bytes("v")), StatusCode.INVALID_ARGUMENT, "empty");
    assertInvalid(() -> client.get(longKey), StatusCode.TOO_LARGE, "4096");
    assertInvalid(() -> client.delete(new byte[0]), StatusCode.INVALID_ARGUMENT, "empty");
    assertInvalid(
        () -> client.multiGet(List.of(bytes("a"), longKey)), StatusCode.TOO_LARGE, "multi-get key");
    assertInvalid(() -> client.scan(longKey, new byte[0], 10), StatusCode.TOO_LARGE, "scan start");
    assertInvalid(
        () -> client.scan(bytes("a"), bytes("b"), 0), StatusCode.INVALID_ARGUMENT, "limit");
    // The asynchronous forms fail their futures at once.
    CompletableFuture<Void> put = client.putAsync(bytes("k"), bigValue);
    assertThat(put).isCompletedExceptionally();
    assertThatThrownBy(put::join).hasCauseInstanceOf(InvalidRequestException.class);
    assertThatThrownBy(() -> client.put(null, bytes("v"))).isInstanceOf(NullPointerException.class);

    assertThat(tcpRequests()).isEqualTo(before);
    assertThat(client.openConnections()).isZero();

    // The limits themselves are fine.
    byte[] maxKey = new byte[4096];
    maxKey[0] = 'q';
    client.put(maxKey, new byte[1 << 20]);
    assertThat(client.get(maxKey)).hasValueSatisfying(v -> assertThat(v).hasSize(1 << 20));
  }

  @ParameterizedTest
  @EnumSource(Transport.class)
  void closeFailsOutstandingAndLaterOperations(Transport transport) throws Exception {
    startCluster(transport);
    KvsClient client = cluster.client(transport, Duration.ofSeconds(30));
    client.put(bytes("apple"), bytes("v"));
    // An operation that keeps retrying: region 4's primary is not a live server.
    cluster.write(TestCluster.descriptor(4, "s9", 2, RegionState.OPEN));
    awaitRegion(client, TestCluster.descriptor(4, "s9", 2, RegionState.OPEN));
    CompletableFuture<Optional<byte[]>> stuck = client.getAsync(bytes("zebra"));

    client.close();
    assertThatThrownBy(() -> stuck.get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> client.get(bytes("apple"))).isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> client.put(bytes("apple"), bytes("v")))
        .isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> client.delete(bytes("apple"))).isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> client.multiGet(List.of(bytes("apple"))))
        .isInstanceOf(ClosedException.class);
    assertThatThrownBy(() -> client.scan(new byte[0], new byte[0], 1))
        .isInstanceOf(ClosedException.class);
    assertThat(client.scanAsync(new byte[0], new byte[0], 1)).isCompletedExceptionally();
    assertThat(client.openConnections()).isZero();
    client.close(); // idempotent
  }

  @Test
  void buildNeedsAReachableZooKeeper() throws Exception {
    assertThatThrownBy(() -> KvsClient.builder().build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("zookeeper");
    assertThatThrownBy(() -> KvsClient.builder().cluster("no/slashes"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KvsClient.builder().operationTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KvsClient.builder().connectTimeout(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);

    String nowhere = "127.0.0.1:" + freePort();
    long start = System.nanoTime();
    assertThatThrownBy(
            () ->
                KvsClient.builder()
                    .zookeeper(nowhere)
                    .connectTimeout(Duration.ofMillis(500))
                    .build())
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("cannot connect to ZooKeeper at " + nowhere + " within 500 ms");
    assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(5));
  }

  /** A client may start before the cluster is set up; operations wait (within the timeout). */
  @Test
  void clientStartedBeforeTheClusterWaitsForTheRegionMap() throws Exception {
    String name = TestCluster.nextName();
    try (KvsClient client =
        KvsClient.builder()
            .zookeeper(zooKeeper.connectString())
            .cluster(name)
            .operationTimeout(TIMEOUT)
            .build()) {
      assertThat(client.regionMap().size()).isZero();
      CompletableFuture<Void> put = client.putAsync(bytes("kiwi"), bytes("early"));
      cluster = new TestCluster(zooKeeper.connectString(), directory, false, name);
      put.get(10, TimeUnit.SECONDS);
      awaitCondition("the whole map", TIMEOUT, () -> client.regionMap().isComplete());
      assertThat(cluster.server("s1").region(3).get(bytes("kiwi"))).isEqualTo(bytes("early"));
    }
  }

  /**
   * The tcp transport works without kvs-native: the client's classes, loaded where no class of
   * kvs-native can be found, build a tcp client and use it; choosing the fabric transport there
   * fails with a clear error.
   */
  @Test
  void tcpTransportLoadsNoNativeClass() throws Throwable {
    startCluster(Transport.TCP);
    ClassLoader loader = new WithoutNative(KvsClientLifecycleTest.class.getClassLoader());
    Class<?> clientClass = loader.loadClass(KvsClient.class.getName());
    assertThat(clientClass).isNotSameAs(KvsClient.class);

    Object client = build(loader, clientClass, "TCP");
    try {
      Method put = clientClass.getMethod("put", byte[].class, byte[].class);
      Method get = clientClass.getMethod("get", byte[].class);
      put.invoke(client, bytes("kiwi"), bytes("no native"));
      assertThat(((Optional<?>) get.invoke(client, bytes("kiwi"))).map(v -> text((byte[]) v)))
          .hasValue("no native");
    } finally {
      ((AutoCloseable) client).close();
    }
    assertThatThrownBy(() -> build(loader, clientClass, "FABRIC"))
        .isInstanceOf(KvsException.class)
        .hasMessageContaining("the fabric transport needs io.kvs:kvs-native on the class path");
  }

  private Object build(ClassLoader loader, Class<?> clientClass, String transport)
      throws Throwable {
    try {
      Object builder = clientClass.getMethod("builder").invoke(null);
      Class<?> builderClass = builder.getClass();
      @SuppressWarnings({"unchecked", "rawtypes"})
      Object chosen = Enum.valueOf((Class) loader.loadClass(Transport.class.getName()), transport);
      builderClass.getMethod("zookeeper", String.class).invoke(builder, cluster.zookeeper);
      builderClass.getMethod("cluster", String.class).invoke(builder, cluster.name);
      builderClass.getMethod("transport", chosen.getClass()).invoke(builder, chosen);
      return builderClass.getMethod("build").invoke(builder);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /**
   * Defines the client's classes itself and refuses every class of kvs-native (and kvs-server), as
   * if those jars were not on the class path; everything else comes from the parent.
   */
  private static final class WithoutNative extends ClassLoader {
    WithoutNative(ClassLoader parent) {
      super(parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      synchronized (getClassLoadingLock(name)) {
        if (name.startsWith("io.kvs.fabric.")
            || name.startsWith("io.kvs.engine.")
            || name.startsWith("io.kvs.service.")
            || name.startsWith("io.kvs.nativelib.")
            || name.startsWith("io.kvs.server.")) {
          throw new ClassNotFoundException(name + " (hidden: kvs-native is not on the class path)");
        }
        if (!name.startsWith("io.kvs.client.")) {
          return super.loadClass(name, resolve);
        }
        Class<?> loaded = findLoadedClass(name);
        if (loaded == null) {
          try (InputStream in =
              getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
            if (in == null) {
              throw new ClassNotFoundException(name);
            }
            byte[] bytes = in.readAllBytes();
            loaded = defineClass(name, bytes, 0, bytes.length);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
        if (resolve) {
          resolveClass(loaded);
        }
        return loaded;
      }
    }
  }

  private static int freePort() throws java.io.IOException {
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
