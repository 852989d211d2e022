# summary: run the real YCSB client against the local cluster: load|run <workload a-f or file> [-p k=v ...] [-threads N]
#
#   ./kvs ycsb load <workload> [YCSB client options]
#   ./kvs ycsb run  <workload> [YCSB client options]
#
# <workload> is one of a to f (YCSB's core workloads, sized for a quick run:
# kvs-bench/src/main/resources/ycsb/workload<x>) or the path of a workload file.
# The options after it go to YCSB's client (site.ycsb.Client) as they are:
# -p name=value, -P file, -threads N, -target N (open loop; with -p
# measurement.interval=both it also reports latencies from each operation's
# intended start, [Intended-READ] ...), -l label; status lines (-s)
# are always on. The binding is io.kvs.bench.ycsb.KvsYcsbClient; by default it
# talks to the local cluster of ./kvs local start (KVS_LOCAL_DIR), -p
# kvs.zookeeper=host:port picks another (see the class comment for every kvs.*
# property). With -p dataintegrity=true every read is verified ([VERIFY] lines):
# load with it too, since reads are checked against the values it writes.
#
# YCSB's client exits 0 whatever happened, so this command reads its summary
# (kept in target/ycsb/<load|run>-<workload>.txt) and fails when an operation
# or a verification did not return OK, or nothing ran.

KVS_YCSB_DB=io.kvs.bench.ycsb.KvsYcsbClient

cmd_ycsb() {
  local phase="${1:-}" flag
  case "$phase" in
    load) flag=-load ;;
    run) flag=-t ;;
    "" | help | -h | --help)
      ycsb_usage
      return 0
      ;;
    *) die "unknown YCSB phase '$phase'; usage: ./kvs ycsb load|run <workload> [options]" ;;
  esac
  [[ $# -ge 2 ]] || die "name the workload: ./kvs ycsb $phase a|b|c|d|e|f|<file> [options]"
  local workload="$2"
  shift 2
  local file
  file="$(ycsb_workload_file "$workload")"

  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  local jar ycsb_lib="$KVS_HOME/kvs-bench/target/ycsb-lib"
  jar="$(ls "$KVS_HOME"/kvs-bench/target/kvs-bench-*.jar 2>/dev/null | head -1)"
  [[ -n "$jar" ]] || die "kvs-bench is not built; run ./kvs build"
  compgen -G "$ycsb_lib/core-*.jar" >/dev/null ||
    die "YCSB core is missing from $ycsb_lib; run ./kvs build"

  local dir="${KVS_LOCAL_DIR:-$KVS_HOME/target/local}"
  if ycsb_sets_property kvs.zookeeper "$@"; then
    say "YCSB $phase of $(basename "$file") (cluster given by -p kvs.zookeeper)"
  else
    ycsb_check_local_cluster "$dir"
    say "YCSB $phase of $(basename "$file") against the local cluster in $dir"
  fi
  local out_dir="$KVS_HOME/target/ycsb"
  local summary="$out_dir/$phase-$(basename "$file").txt"
  mkdir -p "$out_dir"
  note "summary: $summary"
  echo

  local flags=()
  [[ "$(java_major_version)" -ge 22 ]] && flags+=(--enable-native-access=ALL-UNNAMED)
  flags+=("-Dkvs.log.level=${KVS_LOG_LEVEL:-WARN}")
  # kvs.local.dir first: properties given later on the command line override it.
  java "${flags[@]}" -cp "$jar:$KVS_HOME/kvs-bench/target/lib/*:$ycsb_lib/*" site.ycsb.Client \
    "$flag" -s -db "$KVS_YCSB_DB" -P "$file" -p "kvs.local.dir=$dir" "$@" | tee "$summary"
  ycsb_check_summary "$summary" "$phase"
}

ycsb_usage() {
  echo "usage: ./kvs ycsb load|run <workload> [-p name=value ...] [-threads N] [YCSB options]"
  echo
  echo "workloads (kvs-bench/src/main/resources/ycsb/), or the path of a workload file:"
  local file
  for file in "$KVS_HOME"/kvs-bench/src/main/resources/ycsb/workload?; do
    printf '  %-4s %s\n' "${file: -1}" "$(sed -n '1s/^# YCSB workload .: //p' "$file")"
  done
  echo
  echo "e.g. ./kvs local start && ./kvs ycsb load a && ./kvs ycsb run a -p dataintegrity=true"
}

# The workload file of a-f or a path.
ycsb_workload_file() {
  local workload="$1"
  if [[ "$workload" =~ ^(workload)?[a-f]$ ]]; then
    echo "$KVS_HOME/kvs-bench/src/main/resources/ycsb/workload${workload: -1}"
  elif [[ -f "$workload" ]]; then
    echo "$(cd "$(dirname "$workload")" && pwd)/$(basename "$workload")"
  else
    die "no workload '$workload': name one of a to f or a workload file"
  fi
}

# Whether the YCSB options "$@" set property $1 with -p.
ycsb_sets_property() {
  local name="$1" previous=""
  shift
  local arg
  for arg in "$@"; do
    [[ "$previous" == -p && "$arg" == "$name="* ]] && return 0
    previous="$arg"
  done
  return 1
}

ycsb_check_local_cluster() {
  local dir="$1" status
  [[ -f "$dir/cluster.properties" ]] ||
    die "no local cluster in $dir; start one with ./kvs local start"
  if ! status="$(run_java io.kvs.tools.local.LocalCluster status --dir "$dir" 2>&1)"; then
    printf '%s\n' "$status" | tail -3 >&2
    die "the local cluster in $dir is not running (or not every region is open); start one with ./kvs local start"
  fi
}

# Fails unless the summary shows operations and every one of them (and every
# verification) returned OK.
ycsb_check_summary() {
  local summary="$1" phase="$2" bad
  if grep -q 'DBException\|WorkloadException' "$summary"; then
    die "YCSB could not start the binding or the workload (see above)"
  fi
  grep -Eq '^\[(READ|UPDATE|INSERT|SCAN|READ-MODIFY-WRITE|DELETE)\], Operations, [1-9]' "$summary" ||
    die "YCSB ran no operations (see above)"
  bad="$(grep -E '^\[[A-Z-]+\], Return=' "$summary" | grep -v ', Return=OK,' || true)"
  if [[ -n "$bad" ]]; then
    printf '%s\n' "$bad" >&2
    if [[ "$phase" == run ]] && grep -q 'Return=NOT_FOUND' <<<"$bad"; then
      note "records missing: load the workload first (./kvs ycsb load <workload>)" >&2
    fi
    if grep -q '^\[VERIFY\]' <<<"$bad"; then
      note "reads verify against the values a load with -p dataintegrity=true wrote" >&2
    fi
    die "some operations or verifications did not return OK"
  fi
  say "YCSB $phase done: every operation returned OK"
}
