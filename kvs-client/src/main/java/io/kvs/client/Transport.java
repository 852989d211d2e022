package io.kvs.client;

/** How a {@link KvsClient} reaches the region servers. */
public enum Transport {
  /**
   * The TCP framing of the wire protocol (docs/PROTOCOL.md, "Client TCP framing"): pure Java, works
   * everywhere. The default. Plain (not TLS) connections have no I/O thread: a blocking call writes
   * its request and reads its reply itself when no other thread is reading (docs/ARCHITECTURE.md,
   * "The client's threads"). TLS connections, and plain ones with the system property {@code
   * kvs.client.tcp=netty}, run on Netty event loops.
   */
  TCP,
  /**
   * The one-sided fabric transport of {@code kvs-native} (libfabric {@code shm}, {@code tcp} or
   * {@code verbs}, whichever provider each server announces). Needs {@code kvs-native} on the class
   * path and libfabric on the host; every server must serve it.
   */
  FABRIC
}
