/**
 * {@code ./kvs chaos}: the seeded chaos campaign. A local cluster of processes serves a recorded
 * load from independent clients while a schedule drawn from a seed injects faults of every kind
 * (kills, pauses, network cuts, a full disk, planned changes, garbage bytes on every port), one
 * after another and sometimes two at once, waiting for full strength after each; then the history
 * is checked for linearizability and lost acknowledged writes, the replicas are compared, and
 * crashes nobody injected are counted; a probe beside it records when the machine itself stood
 * still ({@link io.kvs.bench.chaos.MachineProbe}) and when ZooKeeper did ({@link
 * io.kvs.bench.chaos.ZooKeeperProbe}). Entry point: {@link io.kvs.bench.chaos.ChaosCampaign}.
 */
package io.kvs.bench.chaos;
