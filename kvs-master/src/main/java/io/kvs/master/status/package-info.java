/**
 * The master's status page (docs/OPERATIONS.md, "Status page"): the cluster's configuration, its
 * servers with their load, every region with its range, group, epoch and health, and the recent
 * recoveries, as HTML ({@code /}, {@code /status}) rendered in the browser from the JSON of {@code
 * /api/status}. {@link io.kvs.master.status.RegionHealth} judges a region from what its members
 * report holding (control {@code list}, asked through {@link io.kvs.master.status.ServerProbe},
 * bounded and cached), not from the map alone; {@link io.kvs.master.status.RecoveryLog} is the
 * bounded record of recoveries the reconciler keeps. {@code ./kvs local status} uses the same
 * judgement.
 */
package io.kvs.master.status;
