/**
 * The request handler behind every transport: wire requests answered from engine regions attached
 * with their placement, and the replication that runs inside it (a primary's groups of streams to
 * its backups, a backup's sinks), all native; Java attaches regions, promotes replicas and reads
 * how each backup stands ({@link io.kvs.service.RegionService#backupStates}). {@link
 * io.kvs.service.ClientDoor} serves the client port natively on shard threads, each request run to
 * completion in the service, over TLS (OpenSSL, inside the door) when configured.
 */
package io.kvs.service;
