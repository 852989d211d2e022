package io.kvs.master.status;

import io.kvs.core.cluster.ClusterConfig;
import io.kvs.core.cluster.MasterAddress;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Everything the status page shows, read at one moment: the metadata in ZooKeeper, what servers
 * answered, and what this master knows of itself.
 *
 * @param cluster the cluster's name
 * @param config its configuration, empty before the first master created it
 * @param regions the region map, by id
 * @param servers the live servers (registered in ZooKeeper), by id
 * @param probes what each live server answered, by id
 * @param masterId this master's id
 * @param active whether this master is the active one
 * @param activeMasterId the active master's id, empty if none is known
 * @param converged whether the active master's last pass found every region open (false on a
 *     standby, which does not know)
 * @param masters the masters that published their HTTP address
 * @param recoveries this master's recent recoveries ({@link RecoveryLog#recent()})
 * @param decommissioned the servers being decommissioned ({@code ./kvs admin decommission})
 * @param generatedAtMillis when it was read (milliseconds since the epoch)
 */
public record ClusterSnapshot(
    String cluster,
    Optional<ClusterConfig> config,
    List<RegionDescriptor> regions,
    Map<String, ServerInfo> servers,
    Map<String, ServerProbe.Probe> probes,
    String masterId,
    boolean active,
    String activeMasterId,
    boolean converged,
    List<MasterAddress> masters,
    List<Recovery> recoveries,
    Set<String> decommissioned,
    long generatedAtMillis) {}
