# summary: build what is missing and run the demo (today: the storage engine in process)
cmd_demo() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  say "Running the demo: the KVS storage engine, in process, through its Java API"
  note "The cluster does not exist yet; this runs the most real part that does: a region on a"
  note "volume file under target/demo/, written, read, scanned, closed and recovered."
  echo
  run_java io.kvs.bench.EngineDemo "${1:-$KVS_HOME/target/demo/volume}" "${@:2}"
}
