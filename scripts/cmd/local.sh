# summary: a cluster of local processes: start [--servers 3] [--regions 1] [--replication 2] [--mode send-index|build-index|none], status, verify, stop, kill|pause|resume|restart <process>, join <new server>
#
#   ./kvs local start [--servers 3] [--regions 1] [--replication 2]
#                     [--mode send-index|build-index|none] [--masters 1] [--fabric stream|tcp|shm|none]
#                     [--split-points K1,K2,... | --split-prefix PREFIX]
#                     [--session-timeout-ms 4000] [--master-session-timeout-ms MS]
#                     [--min-replicas 1]
#                     [--durability flush|sync] [--metrics on|off]
#                     [--tls [--tls-client-auth require]]
#   ./kvs local status
#   ./kvs local verify [--patience SECONDS]
#   ./kvs local stop
#   ./kvs local kill|pause|resume|restart s1|m1|zookeeper
#   ./kvs local join s4
#
# Every process (ZooKeeper, masters, region servers) runs on its own, with its
# directory and log file under the cluster directory (KVS_LOCAL_DIR, default
# target/local). Starting again over that directory reuses its data. A new
# cluster has one region, which the master splits as it grows (at 2 MiB while
# its primary leads only it, stepping up to 256 MiB: --split-first-size,
# --split-size) and spreads over the servers; --regions N cuts the key space
# into N regions from the start, evenly over the first two key bytes unless
# split points are given (for YCSB's keys: --split-prefix usertable:user). A server is
# declared dead once its ZooKeeper session expires (--session-timeout-ms); a
# standby master takes over once the active one's session expires
# (--master-session-timeout-ms, default half the servers', at least 1000); a
# region refuses writes while fewer than --min-replicas of its replicas (the
# primary counted) are in sync. --durability sync acknowledges a write only once
# it is durable on its primary's disk (flush: within 50 ms). --metrics off
# stops the servers counting and timing requests (to measure what that costs;
# docs/BENCHMARKS.md, "Cost of metrics"). verify checks
# that every region's backups hold what its primary holds (digests of the
# send-index levels, or of full scans), retrying for up to --patience seconds
# (default 30) while compactions and writes move the replicas on. kill, pause,
# resume and restart inject faults into one process: SIGKILL, SIGSTOP, SIGCONT,
# and a restart with its original command line (after a SIGKILL if it runs).
# join starts a region server new to the cluster as the first one was started
# (its own id, directory and log); the master's balancer gives it its share.
# Every start writes a new cluster secret (<dir>/secret, mode 0600) that
# authenticates the control RPC and the fabric bootstrap; --tls also makes a
# throwaway CA and certificates under <dir>/tls/ and runs the client port and
# the control RPC over TLS (--tls-client-auth require: mutual TLS on the client
# port). ./kvs shell and ./kvs demo find both in the cluster directory
# (docs/OPERATIONS.md, "Security").

cmd_local() {
  local action="${1:-status}"
  [[ $# -gt 0 ]] && shift
  case "$action" in
    start | status | verify | stop | kill | pause | resume | restart | join) ;;
    *) die "usage: ./kvs local start|status|verify|stop|kill|pause|resume|restart|join [options]" ;;
  esac
  if [[ "$action" == start || "$action" == restart || "$action" == join ]]; then
    ensure_packages "${KVS_BUILD_PACKAGES[@]}"
    ensure_built
  fi
  if [[ "$action" =~ ^(kill|pause|resume|restart|join)$ ]]; then
    [[ $# -gt 0 ]] || die "usage: ./kvs local $action s1|m1|zookeeper (join: a new id, s4)"
    local process="$1"
    shift
    run_java io.kvs.tools.local.LocalCluster "$action" "$process" --dir "$(local_cluster_dir)" "$@"
    return
  fi
  run_java io.kvs.tools.local.LocalCluster "$action" --dir "$(local_cluster_dir)" "$@"
}

local_cluster_dir() {
  echo "${KVS_LOCAL_DIR:-$KVS_HOME/target/local}"
}
