package io.kvs.tools.fault;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The TCP sockets of a process on this host, read from {@code /proc}: the ports it listens on and
 * its established connections. A socket belongs to a process when one of its file descriptors names
 * the socket's inode; both IPv4 and IPv6 tables are read.
 */
public final class ProcessSockets {
  /** Socket state "listen" in {@code /proc/net/tcp}. */
  private static final String LISTEN = "0A";

  /** Socket state "established". */
  private static final String ESTABLISHED = "01";

  private static final List<Path> TABLES =
      List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

  /** One established connection, by its ports on this host. */
  public record Connection(int localPort, int remotePort) {}

  private ProcessSockets() {}

  /** The TCP ports {@code pid} listens on, ascending. */
  public static Set<Integer> listeningPorts(long pid) throws IOException {
    Set<String> inodes = socketInodes(pid);
    Set<Integer> ports = new TreeSet<>();
    for (String[] fields : rows()) {
      if (fields[3].equals(LISTEN) && inodes.contains(fields[9])) {
        ports.add(port(fields[1]));
      }
    }
    return ports;
  }

  /** The established TCP connections of {@code pid}. */
  public static List<Connection> connections(long pid) throws IOException {
    Set<String> inodes = socketInodes(pid);
    List<Connection> connections = new ArrayList<>();
    for (String[] fields : rows()) {
      if (fields[3].equals(ESTABLISHED) && inodes.contains(fields[9])) {
        connections.add(new Connection(port(fields[1]), port(fields[2])));
      }
    }
    return connections;
  }

  /** The inodes of the sockets {@code pid} holds open. */
  private static Set<String> socketInodes(long pid) throws IOException {
    Set<String> inodes = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            inodes.add(target.substring(8, target.length() - 1));
          }
        } catch (IOException gone) {
          // closed meanwhile
        }
      }
    }
    return inodes;
  }

  /** Every row of the TCP tables, split into fields (local, remote, state, ..., inode at 9). */
  private static List<String[]> rows() throws IOException {
    List<String[]> rows = new ArrayList<>();
    for (Path table : TABLES) {
      if (!Files.exists(table)) {
        continue;
      }
      List<String> lines = Files.readAllLines(table);
      for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
        String[] fields = line.trim().split("\\s+");
        if (fields.length > 9) {
          rows.add(fields);
        }
      }
    }
    return rows;
  }

  /** The port of an "ADDRESS:PORT" field (both in hexadecimal). */
  private static int port(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1), 16);
  }
}
