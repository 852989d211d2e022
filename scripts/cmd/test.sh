# summary: run every check and test: formatting, native (CTest) and Java tests, sanitizers
#
# Steps, all run even when an earlier one fails, then summarized:
#   1. C++ formatting (clang-format, .clang-format at the root)
#   2. Maven verify: CMake build with -Werror, CTest, Surefire, Failsafe
#      (against the packaged jars), Java formatting (Spotless)
#   3. the native tests again, built with AddressSanitizer + UBSan
cmd_test() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_TEST_PACKAGES[@]}"
  local failed=() started=$SECONDS

  say "1/3 Checking C++ formatting (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1))"
  if check_cpp_format; then note "C++ formatting: ok"; else failed+=("C++ formatting"); fi

  say "2/3 Building and testing with Maven (CMake + CTest, Surefire, Failsafe, Spotless)"
  if (cd "$KVS_HOME" && mvn_cmd verify); then
    mkdir -p "$(dirname "$KVS_BUILD_STAMP")" && touch "$KVS_BUILD_STAMP"
  else
    failed+=("Maven verify (native build/tests, Java tests or Java formatting)")
  fi

  say "3/3 Native tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  if run_sanitized_native_tests; then note "sanitizer build: ok"; else failed+=("sanitizer build"); fi

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

run_sanitized_native_tests() {
  local build_dir="$KVS_HOME/kvs-native/target/native-sanitize"
  cmake -S "$KVS_HOME/kvs-native" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKVS_SANITIZE=ON --log-level=WARNING &&
    cmake --build "$build_dir" &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir "$build_dir" --output-on-failure --parallel 2
}
