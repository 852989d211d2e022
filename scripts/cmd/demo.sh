# summary: build what is missing, start a local 3-server cluster, load it, run a workload, report, stop (~1 min)
#
#   ./kvs demo [--keys 20000] [--seconds 15] [--threads 8] [--transport tcp|fabric]
#              [--servers 3] [--regions 16] [--replication 2]
#
# Starts a cluster of separate processes (ZooKeeper, a master, region servers)
# in its own directory (KVS_DEMO_DIR, default target/demo-cluster; emptied
# first), drives it through the client library (io.kvs.tools.demo.ClusterDemo)
# and stops it again, also on Ctrl-C or failure. It does not touch a cluster
# started with ./kvs local.

cmd_demo() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  KVS_DEMO_CLUSTER_DIR="${KVS_DEMO_DIR:-$KVS_HOME/target/demo-cluster}"
  local dir="$KVS_DEMO_CLUSTER_DIR"
  say "Running the demo: a local KVS cluster of separate processes, through the client"
  note "ZooKeeper, a master and region servers replicating in send-index mode, each its own"
  note "process under $dir (logs in $dir/logs)."
  echo
  # The demo stops its cluster itself (also on Ctrl-C); this catches a demo JVM that died.
  trap demo_stop_left_over EXIT
  run_java io.kvs.tools.demo.ClusterDemo --dir "$dir" "$@"
}

# Stops the demo's cluster if any of its processes still runs.
demo_stop_left_over() {
  local dir="$KVS_DEMO_CLUSTER_DIR" pid
  [[ -f "$dir/cluster.properties" ]] || return 0
  for pid in $(sed -n 's/^pid\.[^=]*=\([0-9]*\)$/\1/p' "$dir/cluster.properties"); do
    if [[ -r "/proc/$pid/cmdline" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "io\.kvs\."; then
      note "stopping the demo cluster left running in $dir"
      run_java io.kvs.tools.local.LocalCluster stop --dir "$dir" >/dev/null || true
      return 0
    fi
  done
}
