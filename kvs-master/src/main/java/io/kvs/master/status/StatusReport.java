package io.kvs.master.status;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.MasterAddress;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.HeldRegion;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The JSON of the status page ({@code /api/status}), built from a {@link ClusterSnapshot}; its
 * fields are documented in docs/OPERATIONS.md, "Status page". Keys are printed with {@link
 * Keys#print} (and given in base64 too); everything else is as the metadata has it.
 */
public final class StatusReport {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private StatusReport() {}

  /** The JSON object of {@code snapshot}. */
  public static ObjectNode of(ClusterSnapshot snapshot) {
    int replication = snapshot.config().map(ClusterConfig::replicationFactor).orElse(1);
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    snapshot
        .servers()
        .keySet()
        .forEach(
            id -> {
              ServerProbe.Probe probe = snapshot.probes().get(id);
              held.put(id, probe == null ? null : probe.held());
            });
    ObjectNode root = JSON.objectNode();
    root.put("generatedAt", snapshot.generatedAtMillis());
    root.set("cluster", cluster(snapshot));
    root.set("master", master(snapshot));

    Set<Long> inRecovery = new HashSet<>();
    snapshot.recoveries().stream()
        .filter(Recovery::inProgress)
        .forEach(recovery -> inRecovery.add(recovery.regionId()));
    Map<String, Integer> byState = new HashMap<>();
    Map<String, Integer> byHealth = new HashMap<>();
    ArrayNode regions = JSON.arrayNode();
    ArrayNode underReplicated = JSON.arrayNode();
    ArrayNode recovering = JSON.arrayNode();
    for (RegionDescriptor region : snapshot.regions()) {
      RegionHealth health = RegionHealth.of(region, held, replication);
      byState.merge(region.state().name(), 1, Integer::sum);
      byHealth.merge(health.health(), 1, Integer::sum);
      regions.add(region(region, health));
      if (RegionHealth.underReplicated(region, replication)) {
        underReplicated.add(region.id());
      }
      if (region.state() != RegionState.OPEN || inRecovery.contains(region.id())) {
        recovering.add(region.id());
      }
    }
    ObjectNode summary = root.putObject("summary");
    summary.put("servers", snapshot.servers().size());
    summary.put("regions", snapshot.regions().size());
    ObjectNode states = summary.putObject("byState");
    for (RegionState state : RegionState.values()) {
      states.put(state.name(), byState.getOrDefault(state.name(), 0));
    }
    ObjectNode healths = summary.putObject("byHealth");
    RegionHealth.ALL.forEach(name -> healths.put(name, byHealth.getOrDefault(name, 0)));
    summary.put("underReplicated", underReplicated.size());
    summary.put("recovering", recovering.size());

    root.set("servers", servers(snapshot));
    root.set("regions", regions);
    root.set("underReplicated", underReplicated);
    root.set("recovering", recovering);
    root.set("recoveries", recoveries(snapshot));
    return root;
  }

  private static ObjectNode cluster(ClusterSnapshot snapshot) {
    ObjectNode cluster = JSON.objectNode();
    cluster.put("name", snapshot.cluster());
    if (snapshot.config().isEmpty()) {
      cluster.putNull("config");
      return cluster;
    }
    ClusterConfig config = snapshot.config().get();
    ObjectNode node = cluster.putObject("config");
    node.put("regions", config.regions());
    node.put("replicationFactor", config.replicationFactor());
    node.put("mode", config.mode().configName());
    node.put("minReplicas", config.minReplicas());
    return cluster;
  }

  private static ObjectNode master(ClusterSnapshot snapshot) {
    ObjectNode master = JSON.objectNode();
    master.put("id", snapshot.masterId());
    master.put("active", snapshot.active());
    master.put("activeId", snapshot.activeMasterId());
    master.put("converged", snapshot.converged());
    String activeUrl = "";
    ArrayNode masters = master.putArray("masters");
    for (MasterAddress address : snapshot.masters()) {
      ObjectNode node = masters.addObject();
      node.put("id", address.id());
      node.put("host", address.host());
      node.put("httpPort", address.httpPort());
      node.put("statusUrl", address.url("/status"));
      node.put("metricsUrl", address.url("/metrics"));
      node.put("active", address.id().equals(snapshot.activeMasterId()));
      if (address.id().equals(snapshot.activeMasterId())) {
        activeUrl = address.url("/status");
      }
    }
    master.put("activeStatusUrl", activeUrl);
    return master;
  }

  private static ArrayNode servers(ClusterSnapshot snapshot) {
    ArrayNode servers = JSON.arrayNode();
    for (ServerInfo server : snapshot.servers().values()) {
      ObjectNode node = servers.addObject();
      node.put("id", server.id());
      node.put("host", server.host());
      node.put("tcpPort", server.tcpPort());
      node.put("controlPort", server.controlPort());
      node.put(
          "fabric", server.hasFabric() ? server.fabricProvider() + ":" + server.fabricPort() : "");
      node.put("httpPort", server.httpPort());
      node.put("decommissioned", snapshot.decommissioned().contains(server.id()));
      node.put(
          "metricsUrl",
          server.httpPort() > 0
              ? MasterAddress.url(server.host(), server.httpPort(), "/metrics")
              : "");
      int primary = 0;
      int backup = 0;
      int joining = 0;
      for (RegionDescriptor region : snapshot.regions()) {
        RegionRole role = region.roleOf(server.id());
        primary += role == RegionRole.PRIMARY ? 1 : 0;
        backup += role == RegionRole.BACKUP ? 1 : 0;
        joining += region.joining().contains(server.id()) ? 1 : 0;
      }
      node.put("primaryOf", primary);
      node.put("backupOf", backup);
      node.put("joiningOf", joining);
      ServerProbe.Probe probe = snapshot.probes().get(server.id());
      boolean answered = probe != null && probe.answered();
      node.put("answered", answered);
      node.put("error", probe == null ? "not asked" : probe.error());
      node.put("probedAt", probe == null ? 0 : probe.probedAtMillis());
      node.put("holds", answered ? probe.held().size() : 0);
      ObjectNode stats = node.putObject("stats");
      if (probe != null) {
        probe.stats().forEach(stats::put);
      }
    }
    return servers;
  }

  private static ObjectNode region(RegionDescriptor region, RegionHealth health) {
    ObjectNode node = JSON.objectNode();
    node.put("id", region.id());
    node.put("start", Keys.print(region.start()));
    node.put("end", Keys.print(region.end()));
    node.put("startBase64", Base64.getEncoder().encodeToString(region.start()));
    node.put("endBase64", Base64.getEncoder().encodeToString(region.end()));
    node.put("primary", region.primary());
    node.set("backups", strings(region.backups()));
    node.set("joining", strings(region.joining()));
    node.set("inSync", strings(region.backupsInSync()));
    node.put("epoch", region.epoch());
    node.put("state", region.state().name());
    node.put("health", health.health());
    node.set("notHeldBy", strings(health.notHeldBy()));
    node.set("notAnswered", strings(health.notAnswered()));
    node.put("detail", health.detail());
    return node;
  }

  private static ArrayNode recoveries(ClusterSnapshot snapshot) {
    ArrayNode recoveries = JSON.arrayNode();
    for (Recovery recovery : snapshot.recoveries()) {
      ObjectNode node = recoveries.addObject();
      node.put("regionId", recovery.regionId());
      node.set("steps", strings(recovery.steps()));
      node.put("stepsDropped", recovery.stepsDropped());
      node.put("startedAt", recovery.startedAtMillis());
      node.put("endedAt", recovery.endedAtMillis());
      node.put("durationMs", recovery.durationMillis(snapshot.generatedAtMillis()));
      node.put("outcome", recovery.outcome());
    }
    return recoveries;
  }

  private static ArrayNode strings(List<String> values) {
    ArrayNode array = JSON.arrayNode();
    values.forEach(array::add);
    return array;
  }
}
