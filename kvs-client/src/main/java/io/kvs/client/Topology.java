package io.kvs.client;

import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.ServerInfo;
import java.util.Map;

/**
 * An immutable snapshot of the cluster metadata the client routes by.
 *
 * @param regions the region map
 * @param servers the live servers by id
 * @param version raised at every change, so that waiters can tell whether it changed
 */
record Topology(RegionMap regions, Map<String, ServerInfo> servers, long version) {
  static final Topology EMPTY = new Topology(RegionMap.empty(), Map.of(), 0);
}
