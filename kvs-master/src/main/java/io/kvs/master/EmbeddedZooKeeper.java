package io.kvs.master;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Properties;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * A single-node ZooKeeper server inside this JVM, its data under a directory: the one-machine
 * default when no ensemble is configured. Not for production, where an ensemble of its own runs.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
  private final ZooKeeperServerEmbedded server;
  private final String connectString;

  private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, String connectString) {
    this.server = server;
    this.connectString = connectString;
  }

  /**
   * Starts a server keeping its data under {@code directory} (created if missing), listening on
   * {@code 127.0.0.1:port} (0 picks a free port).
   */
  public static EmbeddedZooKeeper start(Path directory, int port) throws Exception {
    return start(directory, "127.0.0.1", port);
  }

  /**
   * Starts a server keeping its data under {@code directory}, listening on {@code host:port} (0
   * picks a free port; host {@code 0.0.0.0} listens on every interface, as in a container).
   */
  public static EmbeddedZooKeeper start(Path directory, String host, int port) throws Exception {
    return start(directory, host, port, null);
  }

  /**
   * Starts a server as {@link #start(Path, String, int)} does, its transaction log under {@code
   * logDirectory} (null: with its snapshots under {@code directory}). ZooKeeper answers nothing,
   * reads and pings included, while a write waits for the log's fsync, so a session lapses when
   * that fsync waits seconds behind other writers: its administrators' guide asks for a device of
   * the log's own.
   */
  public static EmbeddedZooKeeper start(Path directory, String host, int port, Path logDirectory)
      throws Exception {
    return start(directory, host, port, logDirectory, DEFAULT_CONNECTIONS_PER_HOST);
  }

  /**
   * ZooKeeper's own bound on connections from one address: 60. Every process of a local cluster
   * connects from 127.0.0.1, so a cluster of more than about 60 processes needs more (the master's
   * scale simulation runs hundreds of simulated servers in one process).
   */
  public static final int DEFAULT_CONNECTIONS_PER_HOST = 60;

  /**
   * Starts a server as {@link #start(Path, String, int, Path)} does, taking at most {@code
   * connectionsPerHost} connections from one address (0: no bound).
   */
  public static EmbeddedZooKeeper start(
      Path directory, String host, int port, Path logDirectory, int connectionsPerHost)
      throws Exception {
    Files.createDirectories(directory.resolve("data"));
    int clientPort = port != 0 ? port : freePort();
    Properties config = new Properties();
    config.setProperty("clientPort", Integer.toString(clientPort));
    config.setProperty("clientPortAddress", host);
    config.setProperty("dataDir", directory.resolve("data").toAbsolutePath().toString());
    if (logDirectory != null) {
      Files.createDirectories(logDirectory);
      config.setProperty("dataLogDir", logDirectory.toAbsolutePath().toString());
    }
    // Sessions expire on tick boundaries: a short tick keeps a dead server's expiry (and the
    // recovery that waits for it) close to its session timeout, not up to a tick past it.
    config.setProperty("tickTime", "200");
    config.setProperty("initLimit", "10");
    config.setProperty("syncLimit", "5");
    config.setProperty("maxSessionTimeout", "60000");
    config.setProperty("maxClientCnxns", Integer.toString(connectionsPerHost));
    config.setProperty("admin.enableServer", "false");
    config.setProperty("4lw.commands.whitelist", "ruok,stat,mntr");
    ZooKeeperServerEmbedded server =
        ZooKeeperServerEmbedded.builder()
            .baseDir(directory.toAbsolutePath())
            .configuration(config)
            .exitHandler(ExitHandler.LOG_ONLY)
            .build();
    try {
      server.start(30_000);
    } catch (Exception e) {
      server.close();
      throw e;
    }
    String reachable = host.equals("0.0.0.0") ? "127.0.0.1" : host;
    return new EmbeddedZooKeeper(server, reachable + ":" + clientPort);
  }

  /**
   * Writes {@link #connectString()} and a newline to {@code file} atomically (a temporary file
   * moved into place), so that a process waiting for the file never reads it half written.
   */
  public void publishConnectString(Path file) throws IOException {
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(temporary, connectString() + "\n", StandardCharsets.UTF_8);
    Files.move(
        temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** The connect string clients use. */
  public String connectString() {
    return connectString;
  }

  @Override
  public void close() {
    server.close();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return socket.getLocalPort();
    }
  }
}
