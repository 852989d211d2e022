package io.kvs.server.tcp;

/**
 * A server's client port (docs/PROTOCOL.md, "Client TCP framing"), served by the native door
 * ({@link NativeClientPort}); what it counts is read by the server's metrics.
 */
public interface ClientPort extends AutoCloseable {
  /** The port it listens on. */
  int port();

  /** Connections refused at the handshake so far. */
  long refusals();

  /** Requests answered so far. */
  long requests();

  /** Client connections open now. */
  int connections();

  /** Connections closed on arrival so far: the most allowed were open. */
  long refusedConnections();

  /** Times a connection stopped being read because its replies were not being read. */
  long outputStalls();

  /**
   * The watchdog's probe of the port's shard threads: whether each ran the probe of the previous
   * call (see {@link io.kvs.service.ClientDoor#probe()}).
   */
  boolean[] probeShards();

  /** Stops accepting, waits (bounded) for the replies still to come, closes the connections. */
  @Override
  void close();
}
