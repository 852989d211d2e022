package io.kvs.bench.scale;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ZooKeeper's count of write transactions so far: its last zxid, read with the {@code stat}
 * four-letter command (which {@code EmbeddedZooKeeper} allows). Every write takes one zxid (a
 * multi-operation transaction one, sessions opening and closing one each), reads and pings none;
 * the difference between two readings is what was written in between, by anyone.
 */
final class ZooKeeperTransactions {
  private static final Pattern ZXID = Pattern.compile("Zxid: 0x([0-9a-fA-F]+)");

  private ZooKeeperTransactions() {}

  /** The last zxid's counter (its low 32 bits: the epoch's transactions) of {@code host:port}. */
  static long count(String zookeeper) throws IOException {
    int colon = zookeeper.lastIndexOf(':');
    try (Socket socket = new Socket()) {
      socket.connect(
          new InetSocketAddress(
              zookeeper.substring(0, colon), Integer.parseInt(zookeeper.substring(colon + 1))),
          5_000);
      socket.setSoTimeout(5_000);
      OutputStream out = socket.getOutputStream();
      out.write("stat".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String reply = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
      Matcher matcher = ZXID.matcher(reply);
      if (!matcher.find()) {
        throw new IOException("no zxid in ZooKeeper's stat: " + reply);
      }
      return Long.parseLong(matcher.group(1), 16) & 0xffff_ffffL;
    }
  }
}
