# summary: talk to a running cluster: put, get, delete, scan, regions (interactive, piped, or -e "cmd")
#
#   ./kvs shell                          interactive, against the local cluster (./kvs local start)
#   ./kvs shell < commands.txt           the same commands, from a file or a pipe
#   ./kvs shell -e "put a 1" -e "get a"  one-shot commands
#   ./kvs shell put greeting "hello world"   one command (also after --)
#   ./kvs shell --zookeeper HOST:PORT [--cluster NAME] [--transport tcp|fabric] [--timeout SECONDS]
#
# The local cluster is the one in KVS_LOCAL_DIR (default target/local), as for
# ./kvs local; --dir or --zookeeper point elsewhere. "help" lists the commands.

cmd_shell() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  # The default directory first, so a --dir on the command line wins.
  run_java io.kvs.tools.shell.Shell --dir "$(local_cluster_dir)" "$@"
}

# Where ./kvs local keeps its cluster (the same default as scripts/cmd/local.sh).
local_cluster_dir() {
  echo "${KVS_LOCAL_DIR:-$KVS_HOME/target/local}"
}
