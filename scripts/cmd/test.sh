# summary: run every check and test: formatting, native (CTest) and Java tests, sanitizers
#
# Steps, all run even when an earlier one fails, then summarized:
#   1. C++ formatting (clang-format, .clang-format at the root) and the demo
#      cluster's Compose files (docker-compose config; no engine needed; ./kvs
#      compose-test runs them for real)
#   2. Maven verify: CMake build with -Werror, CTest, Surefire, Failsafe
#      (against the packaged jars), Java formatting (Spotless)
#   3. the native tests again, built with clang, AddressSanitizer + UBSan
#      (the replication suites over shm only, not again over tcp and stream)
#   4. the fuzz targets (*_fuzz.cc: every decoder of on-device or network bytes), from
#      the same build (libFuzzer + ASan + UBSan), run briefly from the seeds
#      under kvs-native/src/test/fuzz-corpus/<target>/
#   5. the chaos campaign's quick profile (./kvs chaos --quick, about 4 minutes):
#      every kind of fault under a recorded load on a local cluster of the
#      packaged jars, a fresh seed each run (KVS_CHAOS_SEED=N pins one; the
#      campaign prints the command that replays its seed)
# Steps 3 and 4 share one build: compiling the library with ASan twice (once
# for the tests, once for the fuzzers) took longer than either step runs. That
# build compiles in the background at the lowest CPU priority while step 2
# runs (its integration tests spend much of their time waiting for timeouts),
# so steps 3 and 4 mostly find it done. The same build links libkvs.so for
# JVMs (scripts/lib/sanitize.sh), which step 2's MoveStormIT runs region
# servers on: the background job builds it first, and the test asks
# ./kvs asan-library for it, which finds it built without waiting for the
# tests and fuzzers the job builds next.
# shellcheck source=scripts/lib/sanitize.sh
source "$KVS_HOME/scripts/lib/sanitize.sh"
# shellcheck source=scripts/cmd/chaos.sh
source "$KVS_HOME/scripts/cmd/chaos.sh"

cmd_test() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_TEST_PACKAGES[@]}" \
    "${KVS_FUZZ_PACKAGES[@]}" "${KVS_CHAOS_PACKAGES[@]}"
  local failed=() started=$SECONDS

  say "1/5 Checking C++ formatting (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1))"
  if check_cpp_format; then note "C++ formatting: ok"; else failed+=("C++ formatting"); fi
  if check_compose_file; then note "docker/compose.yaml, compose.host.yaml: valid"; else failed+=("Compose files"); fi

  local sanitize_log="$KVS_SANITIZE_BUILD_DIR.log"
  mkdir -p "$(dirname "$sanitize_log")"
  (renice -n 19 -p "$BASHPID" >/dev/null && build_asan_library && build_sanitized) \
    >"$sanitize_log" 2>&1 &
  local sanitize_build=$!

  say "2/5 Building and testing with Maven (CMake + CTest, Surefire, Failsafe, Spotless)"
  local built=0
  if (cd "$KVS_HOME" && mvn_cmd verify); then
    mkdir -p "$(dirname "$KVS_BUILD_STAMP")" && touch "$KVS_BUILD_STAMP"
    built=1
  else
    failed+=("Maven verify (native build/tests, Java tests or Java formatting)")
  fi

  say "3/5 Native tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  # The background build's result is not trusted on its own: build_sanitized
  # runs again below (a no-op when it finished) and reports any error.
  wait "$sanitize_build" || note "the background sanitizer build failed (log: $sanitize_log); building again"
  if run_sanitized_native_tests; then note "sanitizer build: ok"; else failed+=("sanitizer build"); fi

  say "4/5 Fuzzing the readers of on-device bytes (libFuzzer + ASan + UBSan, ~${KVS_FUZZ_BUDGET_SECONDS}s)"
  if run_fuzzers; then note "fuzzing: ok"; else failed+=("fuzzing (see the reproducer above)"); fi

  say "5/5 Chaos campaign, quick profile (every kind of fault under a checked load, ~4 min)"
  if [[ $built -eq 0 ]]; then
    failed+=("chaos campaign (not run: Maven verify failed, so there is no build to run)")
  elif run_chaos --quick ${KVS_CHAOS_SEED:+--seed "$KVS_CHAOS_SEED"}; then
    note "chaos campaign: passed"
  else
    failed+=("chaos campaign (its verdict and replay command are above)")
  fi

  local elapsed=$((SECONDS - started))
  if [[ ${#failed[@]} -gt 0 ]]; then
    printf '\n\033[31mkvs test: FAILED after %ds:\033[0m\n' "$elapsed"
    printf '  - %s\n' "${failed[@]}"
    exit 1
  fi
  printf '\n\033[32mkvs test: every check passed in %ds\033[0m\n' "$elapsed"
}

check_cpp_format() {
  local files
  mapfile -t files < <(cd "$KVS_HOME" && find kvs-native/include kvs-native/src \
    -type f \( -name '*.h' -o -name '*.cc' \) | sort)
  [[ ${#files[@]} -gt 0 ]] || { note "no C++ files found"; return 1; }
  if ! (cd "$KVS_HOME" && clang-format --dry-run --Werror "${files[@]}"); then
    note "fix with: clang-format -i \$(find kvs-native/include kvs-native/src -name '*.h' -o -name '*.cc')"
    return 1
  fi
  note "${#files[@]} files checked"
}

check_compose_file() {
  (cd "$KVS_HOME" && docker-compose -f docker/compose.yaml config --quiet &&
    docker-compose -f docker/compose.host.yaml config --quiet)
}

# Every native test, but the replication suites (ReplicationTest,
# SendIndexTest, SendIndexSplitTest) over libfabric's tcp provider and over
# the stream transport: they run our replication code as over shm (the
# transport differs only below the channel; ChannelTest, FabricPeerTest and
# StreamTest still run the tcp endpoint and the stream transport under the
# sanitizers, and step 2 runs every suite over every provider). Over tcp they
# were a quarter of this step's time, over stream another quarter (82 s of
# 349 s of tests on 2 cores, 2026-12-02).
run_sanitized_native_tests() {
  build_sanitized &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir "$KVS_SANITIZE_BUILD_DIR" --output-on-failure --parallel 2 \
      --exclude-regex '^Providers/(ReplicationTest|SendIndexTest|SendIndexSplitTest)\..*/(tcp|stream)( |$)'
}

# Wall-clock seconds the fuzzers get together; they run two at a time (one
# per core of a CI machine), each for an equal share, at least 5 s.
KVS_FUZZ_BUDGET_SECONDS="${KVS_FUZZ_BUDGET_SECONDS:-60}"

# Builds the fuzz targets with clang and runs each from its committed seeds
# plus the corpus grown by earlier runs (kept under target/, never
# committed). Any crash, sanitizer report, timeout or out-of-memory fails the
# step; the input that caused it is kept and its path printed.
run_fuzzers() {
  local build_dir="$KVS_SANITIZE_BUILD_DIR"
  build_sanitized || return 1
  local targets
  mapfile -t targets <"$build_dir/fuzz_targets.txt"
  [[ ${#targets[@]} -gt 0 ]] || { note "no fuzz targets found"; return 1; }
  local seconds=$((2 * KVS_FUZZ_BUDGET_SECONDS / ${#targets[@]}))
  [[ $seconds -ge 5 ]] || seconds=5
  note "${#targets[@]} targets, ${seconds}s each, two at a time"
  rm -rf "$build_dir/logs" && mkdir -p "$build_dir/logs"
  local lane
  for lane in 0 1; do
    (
      for ((i = lane; i < ${#targets[@]}; i += 2)); do
        run_fuzz_target "$build_dir" "${targets[i]}" "$seconds"
      done
    ) &
  done
  wait
  local target failed=0
  for target in "${targets[@]}"; do
    report_fuzz_target "$build_dir" "$target" || failed=1
  done
  return "$failed"
}

# Runs one fuzz target; its output goes to logs/<target>.log and its exit
# status to logs/<target>.status.
run_fuzz_target() {
  local build_dir="$1" target="$2" seconds="$3"
  local seeds="$KVS_HOME/kvs-native/src/test/fuzz-corpus/$target"
  local corpus="$build_dir/corpus/$target" artifacts="$build_dir/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  local inputs=("$corpus")
  [[ -d "$seeds" ]] && inputs+=("$seeds")
  local status=0
  # The first corpus directory receives new inputs; the seeds stay as they are.
  UBSAN_OPTIONS=print_stacktrace=1 "$build_dir/$target" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "${inputs[@]}" >"$build_dir/logs/$target.log" 2>&1 ||
    status=$?
  echo "$status" >"$build_dir/logs/$target.status"
}

# Prints one line for a fuzz target that passed, or its finding, the
# reproducer and how to replay it; fails for a finding.
report_fuzz_target() {
  local build_dir="$1" target="$2"
  local log="$build_dir/logs/$target.log"
  local status
  status="$(cat "$build_dir/logs/$target.status" 2>/dev/null || echo missing)"
  local runs speed corpus
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
  corpus="$(find "$build_dir/corpus/$target" -type f | wc -l)"
  if [[ "$status" == 0 ]]; then
    note "$(printf '%-24s ok: %9s runs, %6s/s, corpus %s inputs' "$target" "$runs" "$speed" "$corpus")"
    return 0
  fi
  local reproducer
  reproducer="$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)"
  printf '\033[31m    %s FAILED (exit %s)\033[0m\n' "$target" "$status"
  # The sanitizer's or libFuzzer's verdict (crash, timeout, out-of-memory)
  # and a failed KVS_CHECK; the full report is in the log.
  grep -E '^(==[0-9]+== ?ERROR|SUMMARY|kvs: invariant)|runtime error' "$log" | head -5 | sed 's/^/      /'
  note "  log: $log"
  if [[ -n "$reproducer" ]]; then
    note "  reproducer: $reproducer"
    note "  replay: $build_dir/$target $reproducer"
  fi
  return 1
}
