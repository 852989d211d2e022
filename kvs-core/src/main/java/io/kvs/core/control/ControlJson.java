package io.kvs.core.control;

import static io.kvs.core.cluster.ClusterJson.array;
import static io.kvs.core.cluster.ClusterJson.integer;
import static io.kvs.core.cluster.ClusterJson.longValue;
import static io.kvs.core.cluster.ClusterJson.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvs.core.StatusCode;
import io.kvs.core.cluster.ClusterJson;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.ReplicationMode;
import io.kvs.core.cluster.ServerInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The JSON bodies of control frames (docs/PROTOCOL.md, "Control RPC"). Every command and reply
 * carries the control protocol's {@code "version"} ({@link #VERSION}; absent: 1); one of another
 * version is refused as malformed, with a message naming both.
 */
public final class ControlJson {
  /** The control protocol's version: what this build sends, and the only one it takes. */
  public static final int VERSION = 1;

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private ControlJson() {}

  /**
   * @throws IllegalArgumentException if {@code node} ({@code what}) is of another version
   */
  private static void checkVersion(JsonNode node, String what) {
    int version = node.has("version") ? integer(node, "version") : 1;
    if (version != VERSION) {
      throw new IllegalArgumentException(
          what
              + " of control protocol version "
              + version
              + "; this end speaks version "
              + VERSION
              + " (the master, the tools and the servers run different releases: docs/OPERATIONS.md,"
              + " \"Upgrades\")");
    }
  }

  public static byte[] encode(ControlCommand command) {
    ObjectNode node = NODES.objectNode();
    node.put("version", VERSION);
    if (command instanceof ControlCommand.Open open) {
      node.put("command", "open");
      node.set("region", ClusterJson.toNode(open.region()));
      node.put("mode", open.mode().configName());
      node.put("minReplicas", open.minReplicas());
      node.put("streamKey", open.streamKey().base64());
      if (!open.backups().isEmpty()) {
        ArrayNode backups = node.putArray("backups");
        new TreeMap<>(open.backups())
            .values()
            .forEach(info -> backups.add(ClusterJson.toNode(info)));
      }
    } else if (command instanceof ControlCommand.Close close) {
      node.put("command", "close");
      node.put("regionId", close.regionId());
      node.put("epoch", close.epoch());
    } else if (command instanceof ControlCommand.Seal seal) {
      node.put("command", "seal");
      node.put("regionId", seal.regionId());
      node.put("epoch", seal.epoch());
      node.put("key", java.util.Base64.getEncoder().encodeToString(seal.key()));
      if (seal.byLoad()) {
        node.put("byLoad", true);
      }
    } else if (command instanceof ControlCommand.Retire retire) {
      node.put("command", "retire");
      node.put("regionId", retire.regionId());
      node.put("epoch", retire.epoch());
    } else if (command instanceof ControlCommand.PrepareHandover prepare) {
      node.put("command", "prepareHandover");
      node.put("regionId", prepare.regionId());
      node.put("epoch", prepare.epoch());
    } else if (command instanceof ControlCommand.Stats) {
      node.put("command", "stats");
    } else if (command instanceof ControlCommand.Digest digest) {
      node.put("command", "digest");
      node.put("regionId", digest.regionId());
    } else if (command instanceof ControlCommand.RegionStats regionStats) {
      node.put("command", "regionStats");
      node.put("regionId", regionStats.regionId());
    } else {
      node.put("command", "list");
    }
    return ClusterJson.write(node);
  }

  /**
   * @throws IllegalArgumentException for a malformed command
   */
  public static ControlCommand decodeCommand(byte[] json) {
    JsonNode node = ClusterJson.read(json);
    checkVersion(node, "a command");
    return switch (text(node, "command")) {
      case "open" -> {
        JsonNode region = node.get("region");
        if (region == null || !region.isObject()) {
          throw new IllegalArgumentException("open without a region");
        }
        Map<String, ServerInfo> backups = new TreeMap<>();
        if (node.has("backups")) {
          for (JsonNode backup : array(node, "backups")) {
            ServerInfo info = ClusterJson.serverFromNode(backup);
            backups.put(info.id(), info);
          }
        }
        yield new ControlCommand.Open(
            ClusterJson.fromNode(region),
            ReplicationMode.fromConfigName(text(node, "mode")),
            node.has("minReplicas") ? integer(node, "minReplicas") : 1,
            StreamKey.ofBase64(text(node, "streamKey")),
            backups);
      }
      case "close" ->
          new ControlCommand.Close(longValue(node, "regionId"), longValue(node, "epoch"));
      case "seal" ->
          new ControlCommand.Seal(
              longValue(node, "regionId"),
              longValue(node, "epoch"),
              java.util.Base64.getDecoder().decode(text(node, "key")),
              node.path("byLoad").asBoolean(false));
      case "retire" ->
          new ControlCommand.Retire(longValue(node, "regionId"), longValue(node, "epoch"));
      case "prepareHandover" ->
          new ControlCommand.PrepareHandover(longValue(node, "regionId"), longValue(node, "epoch"));
      case "list" -> new ControlCommand.ListRegions();
      case "stats" -> new ControlCommand.Stats();
      case "digest" -> new ControlCommand.Digest(longValue(node, "regionId"));
      case "regionStats" -> new ControlCommand.RegionStats(longValue(node, "regionId"));
      default -> throw new IllegalArgumentException("unknown command " + text(node, "command"));
    };
  }

  /** The strings of array {@code field} of {@code node}; empty if absent. */
  private static List<String> texts(JsonNode node, String field) {
    List<String> values = new ArrayList<>();
    if (node.has(field)) {
      for (JsonNode value : array(node, field)) {
        values.add(value.asText());
      }
    }
    return values;
  }

  public static byte[] encode(ControlReply reply) {
    ObjectNode node = NODES.objectNode();
    node.put("version", VERSION);
    node.put("status", reply.status().code());
    node.put("message", reply.message());
    ArrayNode regions = node.putArray("regions");
    for (HeldRegion held : reply.regions()) {
      ObjectNode region = regions.addObject();
      region.put("regionId", held.regionId());
      region.put("epoch", held.epoch());
      region.put("role", held.role().name());
      region.put("caughtUp", held.caughtUp());
      region.put("replicationFailed", held.replicationFailed());
      held.inSync().forEach(region.putArray("inSync")::add);
      held.failed().forEach(region.putArray("failed")::add);
      if (held.requests() != 0) {
        region.put("requests", held.requests());
      }
      if (!held.joining().isEmpty()) {
        held.joining().forEach(region.putArray("joining")::add);
      }
      if (held.bytes() != 0) {
        region.put("bytes", held.bytes());
      }
    }
    ObjectNode stats = node.putObject("stats");
    reply.stats().forEach(stats::put);
    return ClusterJson.write(node);
  }

  /**
   * @throws IllegalArgumentException for a malformed reply
   */
  public static ControlReply decodeReply(byte[] json) {
    JsonNode node = ClusterJson.read(json);
    checkVersion(node, "a reply");
    List<HeldRegion> regions = new ArrayList<>();
    for (JsonNode region : array(node, "regions")) {
      regions.add(
          new HeldRegion(
              longValue(region, "regionId"),
              longValue(region, "epoch"),
              RegionRole.valueOf(text(region, "role")),
              region.path("caughtUp").asBoolean(false),
              region.path("replicationFailed").asBoolean(false),
              texts(region, "inSync"),
              texts(region, "failed"),
              region.path("requests").asLong(0),
              texts(region, "joining"),
              region.path("bytes").asLong(0)));
    }
    Map<String, Long> stats = new TreeMap<>();
    JsonNode counters = node.get("stats");
    if (counters != null) {
      if (!counters.isObject()) {
        throw new IllegalArgumentException("stats is not an object");
      }
      for (Map.Entry<String, JsonNode> counter : counters.properties()) {
        if (!counter.getValue().canConvertToLong()) {
          throw new IllegalArgumentException("stat " + counter.getKey() + " is no integer");
        }
        stats.put(counter.getKey(), counter.getValue().asLong());
      }
    }
    return new ControlReply(
        StatusCode.fromCode(integer(node, "status")), text(node, "message"), regions, stats);
  }
}
