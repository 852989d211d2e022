# summary: operate a running cluster: servers, regions, stats, move a primary, decommission a server
#
#   ./kvs admin servers                  live servers, replicas held, decommissioned or not
#   ./kvs admin regions                  every region with its group, epoch and state
#   ./kvs admin stats 7                  region 7's counters on each of its members
#   ./kvs admin move 7 s2                hand region 7's primary over to its backup s2
#   ./kvs admin decommission s3          move every replica off s3 (then it may stop)
#   ./kvs admin recommission s3          let s3 hold replicas again
#   ./kvs admin --zookeeper HOST:PORT [--cluster NAME] [--wait SECONDS] COMMAND ...
#
# Against the local cluster in KVS_LOCAL_DIR (default target/local), as ./kvs
# local and ./kvs shell; --dir or --zookeeper point elsewhere. move and
# decommission wait until the master has done them (--no-wait returns at once).

cmd_admin() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  # The default directory first, so a --dir on the command line wins.
  run_java io.kvs.tools.admin.AdminMain --dir "${KVS_LOCAL_DIR:-$KVS_HOME/target/local}" "$@"
}
