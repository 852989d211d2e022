# summary: the seeded chaos campaign: every kind of fault under a recorded load on a local cluster, then linearizability, lost writes, verify, crashes (--quick: ~4 min; default --minutes 60)
#
#   ./kvs chaos [--seed N] [--minutes M] [--quick] [--clients 4] [--keys 512]
#               [--rate OPS_PER_CLIENT] [--max-unavailable-ms MS] [--disk-mib 4096]
#
# A local cluster (ZooKeeper, 2 masters, 4 region servers at replication 3,
# send-index, small in-memory levels, each server's directory on a
# loop-mounted file system) under a recorded load of independent clients,
# while a schedule drawn from the seed injects faults one after another,
# sometimes two at once: kill -9 and restart of servers and masters,
# SIGSTOP/SIGCONT past the session timeout, a server cut from ZooKeeper, a
# primary cut from a backup, a full disk, moves, decommission/recommission,
# balance, garbage bytes on every port. After each fault it waits for full
# strength. At the end it checks the history (per-key linearizability, no
# acknowledged write lost), runs ./kvs local verify, counts crashes nobody
# injected, prints the timeline and the verdict, and writes
# target/bench/chaos.json and chaos.png. The same seed replays the same
# schedule (docs/OPERATIONS.md, "Chaos campaign"). Exit status 1 if any
# check failed.
#
# Needs root (iptables, cgroups, loop devices). Runs in a network namespace of
# its own where one can be made (ip netns), so its iptables rules never touch
# the host's.

KVS_CHAOS_PACKAGES=(iptables iproute2 e2fsprogs mount util-linux procps)

cmd_chaos() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_CHAOS_PACKAGES[@]}"
  ensure_built
  run_chaos "$@"
}

# Runs the campaign (the build must exist), in a new network namespace when
# one can be made; returns the campaign's exit status.
run_chaos() {
  if [[ $(id -u) -ne 0 ]]; then
    printf '\033[31mkvs chaos: needs root (iptables, cgroups, loop devices): every fault kind must run\033[0m\n' >&2
    return 1
  fi
  local ns="kvs-chaos-$$" status=0
  # The campaign's JVM times every operation: its own pauses are logged beside its results.
  mkdir -p "$KVS_HOME/target/bench"
  # (run_java reads it; it need not reach the cluster's processes)
  local KVS_JAVA_FLAGS="-Xlog:gc,safepoint:file=$KVS_HOME/target/bench/chaos-jvm.log:time,uptime"
  if command -v nsenter >/dev/null && ip netns add "$ns" 2>/dev/null; then
    # Deleted however the campaign ends, Ctrl-C included (the JVM cleans up on its own).
    trap 'ip netns del "$ns" 2>/dev/null' EXIT
    ip netns exec "$ns" ip link set lo up
    note "running in network namespace $ns (its iptables rules stay there)"
    KVS_JAVA_WRAPPER="nsenter --net=/run/netns/$ns --" run_java io.kvs.bench.chaos.ChaosCampaign \
      --data-dir "$KVS_HOME/target/bench/data" --out-dir "$KVS_HOME/target/bench" "$@" ||
      status=$?
    trap - EXIT
    ip netns del "$ns" || note "could not delete network namespace $ns"
  else
    note "no network namespace could be made: running in the host's (iptables rules match only the campaign's cgroups)"
    run_java io.kvs.bench.chaos.ChaosCampaign \
      --data-dir "$KVS_HOME/target/bench/data" --out-dir "$KVS_HOME/target/bench" "$@" ||
      status=$?
  fi
  return "$status"
}
