package io.kvs.core.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The JSON form of cluster metadata in ZooKeeper (docs/ARCHITECTURE.md, "Cluster metadata"). Keys
 * are base64. Decoding rejects missing fields and bad values with {@link IllegalArgumentException}.
 *
 * <p>Server registrations, region descriptors and the cluster's configuration carry the metadata
 * format they are in ({@code "format"}, {@link #METADATA_FORMAT}); one of another format is refused
 * with an error that names both (a newer KVS wrote it, or an older one reads it), never read in
 * part. An object without the field is of format 1 (what every build before the field wrote).
 */
public final class ClusterJson {
  /** The format of the metadata this build writes, and the only one it reads. */
  public static final int METADATA_FORMAT = 1;

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private ClusterJson() {}

  /**
   * @throws IllegalArgumentException if {@code node} ({@code what}) is of another metadata format
   */
  private static void checkFormat(JsonNode node, String what) {
    int format = node.has("format") ? integer(node, "format") : 1;
    if (format != METADATA_FORMAT) {
      throw new IllegalArgumentException(
          what
              + " of metadata format "
              + format
              + "; this KVS reads format "
              + METADATA_FORMAT
              + " (a "
              + (format > METADATA_FORMAT ? "newer" : "older")
              + " release wrote it: docs/OPERATIONS.md, \"Upgrades\")");
    }
  }

  public static byte[] encode(ServerInfo server) {
    return write(toNode(server));
  }

  public static ServerInfo decodeServer(byte[] json) {
    return serverFromNode(read(json));
  }

  public static ObjectNode toNode(ServerInfo server) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("format", METADATA_FORMAT);
    node.put("id", server.id());
    node.put("host", server.host());
    node.put("tcpPort", server.tcpPort());
    node.put("fabricPort", server.fabricPort());
    node.put("fabricProvider", server.fabricProvider());
    node.put("controlPort", server.controlPort());
    node.put("httpPort", server.httpPort());
    return node;
  }

  /**
   * @throws IllegalArgumentException for a malformed registration
   */
  public static ServerInfo serverFromNode(JsonNode node) {
    checkFormat(node, "a server registration");
    return new ServerInfo(
        text(node, "id"),
        text(node, "host"),
        integer(node, "tcpPort"),
        integer(node, "fabricPort"),
        text(node, "fabricProvider"),
        integer(node, "controlPort"),
        node.has("httpPort") ? integer(node, "httpPort") : 0);
  }

  public static byte[] encode(MoveRequest move) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("to", move.to());
    if (move.isRefused()) {
      node.put("refused", move.refused());
    }
    return write(node);
  }

  public static byte[] encode(SplitRequest split) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("key", base64(split.key()));
    if (split.isRefused()) {
      node.put("refused", split.refused());
    }
    if (split.byLoad()) {
      node.put("byLoad", true);
    }
    return write(node);
  }

  public static byte[] encode(MergeRequest merge) {
    ObjectNode node = MAPPER.createObjectNode();
    if (merge.isRefused()) {
      node.put("refused", merge.refused());
    }
    return write(node);
  }

  public static MergeRequest decodeMerge(byte[] json) {
    JsonNode node = read(json);
    return new MergeRequest(node.has("refused") ? text(node, "refused") : "");
  }

  public static SplitRequest decodeSplit(byte[] json) {
    JsonNode node = read(json);
    return new SplitRequest(
        bytes(node, "key"),
        node.has("refused") ? text(node, "refused") : "",
        node.path("byLoad").asBoolean(false));
  }

  public static MoveRequest decodeMove(byte[] json) {
    JsonNode node = read(json);
    return new MoveRequest(text(node, "to"), node.has("refused") ? text(node, "refused") : "");
  }

  public static byte[] encode(MasterAddress master) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("id", master.id());
    node.put("host", master.host());
    node.put("httpPort", master.httpPort());
    return write(node);
  }

  public static MasterAddress decodeMasterAddress(byte[] json) {
    JsonNode node = read(json);
    return new MasterAddress(text(node, "id"), text(node, "host"), integer(node, "httpPort"));
  }

  public static byte[] encode(RegionDescriptor region) {
    return write(toNode(region));
  }

  public static RegionDescriptor decodeRegion(byte[] json) {
    return fromNode(read(json));
  }

  /** The JSON object of {@code region}. */
  public static ObjectNode toNode(RegionDescriptor region) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("format", METADATA_FORMAT);
    node.put("id", region.id());
    node.put("start", base64(region.start()));
    node.put("end", base64(region.end()));
    node.put("primary", region.primary());
    ArrayNode backups = node.putArray("backups");
    region.backups().forEach(backups::add);
    ArrayNode joining = node.putArray("joining");
    region.joining().forEach(joining::add);
    node.put("epoch", region.epoch());
    node.put("state", region.state().name());
    if (region.origin() instanceof SplitOrigin split) {
      node.put("parent", split.parent());
      node.put("sibling", split.sibling());
    } else if (region.origin() instanceof MergeOrigin merge) {
      node.put("mergedLeft", merge.left());
      node.put("mergedRight", merge.right());
    }
    return node;
  }

  /** The region of a JSON object from {@link #toNode}. */
  public static RegionDescriptor fromNode(JsonNode node) {
    checkFormat(node, "a region descriptor");
    List<String> backups = new ArrayList<>();
    for (JsonNode backup : array(node, "backups")) {
      backups.add(backup.asText());
    }
    List<String> joining = new ArrayList<>();
    if (node.has("joining")) {
      for (JsonNode backup : array(node, "joining")) {
        joining.add(backup.asText());
      }
    }
    return new RegionDescriptor(
        longValue(node, "id"),
        bytes(node, "start"),
        bytes(node, "end"),
        text(node, "primary"),
        backups,
        joining,
        longValue(node, "epoch"),
        RegionState.valueOf(text(node, "state")),
        originOf(node));
  }

  private static RegionOrigin originOf(JsonNode node) {
    if (node.has("parent")) {
      return new SplitOrigin(longValue(node, "parent"), longValue(node, "sibling"));
    }
    if (node.has("mergedLeft")) {
      return new MergeOrigin(longValue(node, "mergedLeft"), longValue(node, "mergedRight"));
    }
    return null;
  }

  public static byte[] encode(ClusterConfig config) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("format", METADATA_FORMAT);
    node.put("regions", config.regions());
    node.put("replicationFactor", config.replicationFactor());
    node.put("mode", config.mode().configName());
    node.put("minReplicas", config.minReplicas());
    ArrayNode splits = node.putArray("splitPoints");
    config.splitPoints().forEach(split -> splits.add(base64(split)));
    return write(node);
  }

  public static ClusterConfig decodeConfig(byte[] json) {
    JsonNode node = read(json);
    checkFormat(node, "the cluster's configuration");
    List<byte[]> splits = new ArrayList<>();
    for (JsonNode split : array(node, "splitPoints")) {
      splits.add(decodeBase64(split.asText()));
    }
    return new ClusterConfig(
        integer(node, "regions"),
        integer(node, "replicationFactor"),
        ReplicationMode.fromConfigName(text(node, "mode")),
        splits,
        node.has("minReplicas") ? integer(node, "minReplicas") : 1);
  }

  /** The UTF-8 bytes of {@code node}. */
  public static byte[] write(JsonNode node) {
    try {
      return MAPPER.writeValueAsBytes(node);
    } catch (IOException e) {
      throw new IllegalStateException("JSON encoding failed", e);
    }
  }

  /** Parses a JSON object. */
  public static JsonNode read(byte[] json) {
    try {
      JsonNode node = MAPPER.readTree(json);
      if (node == null || !node.isObject()) {
        throw new IllegalArgumentException("not a JSON object");
      }
      return node;
    } catch (IOException e) {
      throw new IllegalArgumentException("malformed JSON: " + e.getMessage(), e);
    }
  }

  private static JsonNode field(JsonNode node, String name) {
    JsonNode value = node.get(name);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("missing field " + name);
    }
    return value;
  }

  public static String text(JsonNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.isTextual()) {
      throw new IllegalArgumentException("field " + name + " is not a string");
    }
    return value.asText();
  }

  public static int integer(JsonNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.canConvertToInt()) {
      throw new IllegalArgumentException("field " + name + " is not an int");
    }
    return value.intValue();
  }

  public static long longValue(JsonNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.canConvertToLong()) {
      throw new IllegalArgumentException("field " + name + " is not a long");
    }
    return value.longValue();
  }

  public static JsonNode array(JsonNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.isArray()) {
      throw new IllegalArgumentException("field " + name + " is not an array");
    }
    return value;
  }

  static byte[] bytes(JsonNode node, String name) {
    return decodeBase64(text(node, name));
  }

  private static String base64(byte[] bytes) {
    return Base64.getEncoder().encodeToString(bytes);
  }

  private static byte[] decodeBase64(String text) {
    try {
      return Base64.getDecoder().decode(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("bad base64 key: " + text, e);
    }
  }
}
