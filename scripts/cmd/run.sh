# summary: run one cluster process in the foreground: zookeeper, master or server [options] (containers, your own hosts)
#
#   ./kvs run zookeeper --dir DIR [--host 0.0.0.0] [--port 2181]
#   ./kvs run master    --id m1 --dir DIR --zookeeper HOST:PORT [--regions 32]
#                       [--replication 2] [--mode build-index|none] [--servers 3]
#   ./kvs run server    --id s1 --dir DIR --zookeeper HOST:PORT [--host HOST]
#                       [--tcp-port 0] [--fabric stream|tcp|shm|verbs|none] [--fabric-port 0]
#                       [--control-port 0] [--memory BYTES]
#
# Each stops cleanly on SIGTERM: the JVM replaces this script's shell (exec),
# so a container's stop signal reaches it as its PID 1 (it took the whole stop
# grace period and a SIGKILL before). ./kvs local starts all of them on this
# machine; this is for running them one by one (docker/compose.yaml).

declare -A KVS_PROCESSES=(
  [zookeeper]=io.kvs.master.ZooKeeperMain
  [master]=io.kvs.master.MasterMain
  [server]=io.kvs.server.RegionServerMain
)

cmd_run() {
  local process="${1:-}"
  local main_class="${KVS_PROCESSES[$process]:-}"
  [[ -n "$main_class" ]] || die "usage: ./kvs run zookeeper|master|server [options]"
  shift
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  KVS_LOG_LEVEL="${KVS_LOG_LEVEL:-INFO}" KVS_JAVA_EXEC=1 run_java "$main_class" "$@"
}
