# summary: run a benchmark: engine (KVS vs RocksDB vs BlobDB, YCSB), protocol (fabric vs Netty), replication (send-index vs build-index), failover (primary kills), elastic (splits and a join under load), tail (open-loop latency), conditional (compare-and-set and increment vs put), master-scale (simulated servers); --quick for the short profile
#
#   ./kvs bench engine [--quick] [options]
#
# Benchmarks compare systems side by side in one run and report numbers; they
# assert nothing. Each prints a table, writes JSON lines and draws a chart
# under target/bench/. Options of a benchmark follow its name; see the class
# comment of its main class (e.g. io.kvs.bench.engine.EngineBenchmark).

# Benchmark name -> main class. A new benchmark is one line here.
declare -A KVS_BENCHMARKS=(
  [engine]=io.kvs.bench.engine.EngineBenchmark
  [protocol]=io.kvs.bench.protocol.ProtocolBenchmark
  [replication]=io.kvs.bench.replication.ReplicationBenchmark
  [failover]=io.kvs.bench.failover.FailoverBenchmark
  [elastic]=io.kvs.bench.elastic.ElasticBenchmark
  [tail]=io.kvs.bench.tail.TailBenchmark
  [master-scale]=io.kvs.bench.scale.MasterScaleBenchmark
  [conditional]=io.kvs.bench.conditional.ConditionalBenchmark
)
declare -A KVS_BENCHMARK_SUMMARIES=(
  [engine]="storage engines under YCSB: KVS vs RocksDB vs RocksDB+BlobDB, from the JVM and natively (--quick: ~15 min; --standard: 4 GiB, in parts of one mix, ~1 h each)"
  [protocol]="wire round trips: fabric shm, tcp and stream vs Netty TCP, one server handler (--quick: ~1 min)"
  [replication]="replication modes on a local cluster under YCSB: none vs build-index vs send-index, RF 2 and 3 (--quick: ~15 min; --standard: the seeds' setup, 3 rounds, ~40 min)"
  [failover]="primary kills under a recorded load, RF 3 and 2: unavailability, time to whole groups and to balanced leadership, lost writes, linearizability (--quick: ~25 min)"
  [elastic]="one region growing under a hot-range load, split and balanced by the master, then a fourth server joining: regions over time, time to the first split and to balance, each split's gap in availability, throughput around splits and the join (--quick: ~5 min)"
  [tail]="latency percentiles under open-loop load at 25-90 % of the peak, RF 3, compactions running (--quick: ~5 min)"
  [conditional]="put vs compare-and-set vs increment on a local RF 2 cluster: throughput, latency percentiles, server CPU per operation, ratios to the put (--quick: ~2 min)"
  [master-scale]="the real master and ZooKeeper against hundreds of simulated servers: pass time, ZooKeeper writes, memory, a failed server's recovery, up to 10,000 regions (--quick: ~5 min)"
)

cmd_bench() {
  local name="${1:-}"
  if [[ -z "$name" || "$name" == help || "$name" == -h || "$name" == --help ]]; then
    bench_usage
    return 0
  fi
  shift
  local main_class="${KVS_BENCHMARKS[$name]:-}"
  [[ -n "$main_class" ]] ||
    die "unknown benchmark '$name'; known: $(bench_names) (run ./kvs bench help)"
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  say "Running the $name benchmark"
  note "results and chart under $KVS_HOME/target/bench/ (the benchmark names them at the end)"
  echo
  # Defaults first, so options given on the command line override them.
  run_java "$main_class" \
    --data-dir "$KVS_HOME/target/bench/data" \
    --out-dir "$KVS_HOME/target/bench" \
    "$@"
}

bench_names() {
  local names
  names="$(printf '%s\n' "${!KVS_BENCHMARKS[@]}" | sort | paste -sd, -)"
  echo "${names//,/, }"
}

bench_usage() {
  echo "usage: ./kvs bench <benchmark> [--quick] [options]"
  echo
  echo "benchmarks:"
  local name
  for name in $(printf '%s\n' "${!KVS_BENCHMARKS[@]}" | sort); do
    printf '  %-12s %s\n' "$name" "${KVS_BENCHMARK_SUMMARIES[$name]}"
  done
}
