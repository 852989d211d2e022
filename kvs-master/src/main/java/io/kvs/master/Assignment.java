package io.kvs.master;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Places replica groups on servers evenly: each region's primary goes to the server with the fewest
 * primaries so far, each backup to the non-member with the fewest replicas so far (ties broken by
 * server order), so primaries and backups both spread over every live server.
 */
final class Assignment {
  record Group(String primary, List<String> backups) {}

  private final List<String> servers;
  private final Map<String, Integer> primaries = new HashMap<>();
  private final Map<String, Integer> replicas = new HashMap<>();

  Assignment(List<String> servers) {
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("no server to assign to");
    }
    this.servers = List.copyOf(servers);
    servers.forEach(
        server -> {
          primaries.put(server, 0);
          replicas.put(server, 0);
        });
  }

  /** The next region's group of {@code replicationFactor} servers (at most as many as exist). */
  Group next(int replicationFactor) {
    String primary = least(primaries, List.of());
    primaries.merge(primary, 1, Integer::sum);
    replicas.merge(primary, 1, Integer::sum);
    List<String> members = new ArrayList<>(List.of(primary));
    List<String> backups = new ArrayList<>();
    for (int i = 1; i < Math.min(replicationFactor, servers.size()); i++) {
      String backup = least(replicas, members);
      replicas.merge(backup, 1, Integer::sum);
      members.add(backup);
      backups.add(backup);
    }
    return new Group(primary, backups);
  }

  private String least(Map<String, Integer> counts, List<String> excluded) {
    String best = null;
    for (String server : servers) {
      if (!excluded.contains(server) && (best == null || counts.get(server) < counts.get(best))) {
        best = server;
      }
    }
    return best;
  }
}
