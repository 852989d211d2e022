/**
 * The master process: it wins a Curator leader election (and rejoins it if its node goes, {@code
 * Election}), keeps the region map in ZooKeeper, bootstraps the cluster (assigning primaries and
 * backups), and reconciles what every live server holds with the map, pass after pass ({@code
 * Reconciler}): failure recovery (groups shrink, an in sync backup is promoted, groups heal),
 * fencing by epochs, reopening regions whose replication failed, the operators' planned changes
 * ({@code PlannedChanges}), splits ({@code Splits}: seal the region on its primary, then one
 * ZooKeeper transaction replaces it by its daughters, which members split from their copies as they
 * open them), merges ({@code Merges}: retire both regions on their primary, then one transaction
 * replaces them by the merged region, which members make from their copies) and its own balancing
 * of replicas and leadership ({@code Balancer}, a few regions at a time, only in a quiet cluster);
 * under send-index a planned handover is written only after the primary merged ahead of it ({@code
 * Handovers}), so the backup promoted replays little. Every step is written to the map before
 * servers are told, so a successor master finishes what one left half done. Commands go to every
 * server at once, each region's in order, through a bounded lane per server ({@code
 * ServerCommands}), so a slow server holds up only its own regions. Every master serves the status
 * page ({@code status}). See docs/ARCHITECTURE.md "Master", "Failure recovery", "Splitting a
 * region", "Merging regions" and "Balancing by itself", docs/OPERATIONS.md "Status page".
 */
package io.kvs.master;
