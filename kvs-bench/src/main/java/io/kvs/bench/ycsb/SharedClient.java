package io.kvs.bench.ycsb;

import io.kvs.client.KvsClient;

/**
 * The one {@link KvsClient} of a JVM, shared by every {@link KvsYcsbClient} (YCSB makes one per
 * client thread): opened by the first {@link #acquire}, closed by the {@link #release} of the last
 * user. The client is thread-safe and pipelines requests over one connection per server, so one
 * suffices for all threads.
 */
final class SharedClient {
  private static KvsClient client;
  private static ClientSettings settings;
  private static int users;

  private SharedClient() {}

  /**
   * The shared client, opened with {@code wanted} if none is open.
   *
   * @throws IllegalStateException if it is open with other settings
   * @throws io.kvs.core.KvsException if it cannot be opened
   */
  static synchronized KvsClient acquire(ClientSettings wanted) {
    if (client == null) {
      client =
          KvsClient.builder()
              .zookeeper(wanted.zookeeper())
              .cluster(wanted.cluster())
              .transport(wanted.transport())
              .operationTimeout(wanted.timeout())
              .security(wanted.security())
              .build();
      settings = wanted;
    } else if (!settings.equals(wanted)) {
      throw new IllegalStateException(
          "the shared KVS client is open with " + settings + ", not " + wanted);
    }
    users++;
    return client;
  }

  /** Gives back a client {@link #acquire} returned; the last user closes it. */
  static synchronized void release(KvsClient released) {
    if (released != client || users == 0) {
      return; // not the current client: already closed
    }
    if (--users == 0) {
      client.close();
      client = null;
      settings = null;
    }
  }

  /** How many users hold the shared client now (tests). */
  static synchronized int users() {
    return users;
  }
}
