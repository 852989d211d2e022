package io.kvs.bench.scale;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay between one simulated server's ZooKeeper client and ZooKeeper, which can be cut: a
 * server killed with {@code kill -9} does not close its session, ZooKeeper expires it once its
 * timeout passes without a heartbeat, and only then does its node go. Cutting the relay (every
 * connection closed, new ones refused) does the same to a simulated server in this process, whose
 * client would otherwise keep its session alive. One thread accepts, two pump each connection (a
 * ZooKeeper client keeps one).
 */
final class ZooKeeperRelay implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean cut;

  /** Relays to {@code zookeeper} ({@code host:port}) from a free port of 127.0.0.1. */
  ZooKeeperRelay(String zookeeper) throws IOException {
    int colon = zookeeper.lastIndexOf(':');
    target =
        new InetSocketAddress(
            zookeeper.substring(0, colon), Integer.parseInt(zookeeper.substring(colon + 1)));
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress("127.0.0.1", 0));
    Thread acceptor = new Thread(this::accept, "kvs-sim-relay");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Where the client connects instead of ZooKeeper. */
  String connectString() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** Closes every connection and refuses new ones: the session expires after its timeout. */
  void cut() {
    cut = true;
    close();
  }

  private void accept() {
    while (!cut) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket();
        server.connect(target, 5_000);
        sockets.add(client);
        sockets.add(server);
        if (cut) {
          close();
          return;
        }
        pump(client, server);
        pump(server, client);
      } catch (IOException e) {
        if (cut || listener.isClosed()) {
          return;
        }
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread thread =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                  out.write(buffer, 0, read);
                }
              } catch (IOException e) {
                // closed: the other direction ends too
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "kvs-sim-relay-pump");
    thread.setDaemon(true);
    thread.start();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    try {
      listener.close();
    } catch (IOException e) {
      // closing anyway
    }
    sockets.forEach(ZooKeeperRelay::closeQuietly);
  }
}
