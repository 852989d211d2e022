# The sanitizer build of libkvs: clang, ASan + UBSan with libFuzzer's coverage
# instrumentation (KVS_FUZZ=ON), in kvs-native/target/native-sanitize. Sourced,
# not executed.
#
# One build serves three uses: the native tests under the sanitizers and the
# fuzz targets (./kvs test, steps 3 and 4), and libkvs.so linked against the
# shared sanitizer runtimes, on which integration tests run region servers
# (MoveStormIT, through ./kvs asan-library): a JVM runs it with ASan's runtime
# preloaded and ASAN_OPTIONS it can live with (./kvs local start
# --native-library does that: io.kvs.tools.local.NativeLibraryLaunch). That
# library is never packaged in the jar.

KVS_SANITIZE_BUILD_DIR="$KVS_HOME/kvs-native/target/native-sanitize"
KVS_ASAN_LIBRARY="$KVS_SANITIZE_BUILD_DIR/libkvs.so"

# The project's version, which a library must report to be loaded
# (NativeLibrary checks it against the jar's).
kvs_project_version() {
  awk '/<artifactId>kvs-parent<\/artifactId>/ { parent = 1 }
       parent && /<version>/ { gsub(/.*<version>|<\/version>.*/, ""); print; exit }' \
    "$KVS_HOME/pom.xml"
}

# Configures the sanitizer build and builds the given CMake targets (all
# without any). Builds that overlap (the background build of ./kvs test and a
# test asking ./kvs asan-library for the library) take turns through a lock:
# two ninja runs in one build directory would race.
build_sanitized() {
  local targets=() target
  for target in "$@"; do targets+=(--target "$target"); done
  mkdir -p "$KVS_SANITIZE_BUILD_DIR"
  (
    flock 9
    CC=clang CXX=clang++ cmake -S "$KVS_HOME/kvs-native" -B "$KVS_SANITIZE_BUILD_DIR" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVS_FUZZ=ON -DKVS_VERSION="$(kvs_project_version)" \
      --log-level=WARNING &&
      cmake --build "$KVS_SANITIZE_BUILD_DIR" "${targets[@]}"
  ) 9>"$KVS_SANITIZE_BUILD_DIR.lock"
}

# Touched once $KVS_ASAN_LIBRARY is built: the library is current while no
# source or build file of libkvs is newer.
KVS_ASAN_LIBRARY_STAMP="$KVS_SANITIZE_BUILD_DIR/libkvs.built"

# Builds (or brings up to date) $KVS_ASAN_LIBRARY alone.
build_asan_library() {
  build_sanitized kvs && touch "$KVS_ASAN_LIBRARY_STAMP"
}

# Whether $KVS_ASAN_LIBRARY was built after the last change to what it is
# built from. ./kvs asan-library then answers at once, even while the rest
# of the sanitizer build (the tests, the fuzzers: ./kvs test builds them in
# the background) holds the build directory's lock.
asan_library_current() {
  [[ -f "$KVS_ASAN_LIBRARY" && -f "$KVS_ASAN_LIBRARY_STAMP" ]] || return 1
  local native="$KVS_HOME/kvs-native"
  [[ -z "$(find "$native/src/main" "$native/include" "$native/CMakeLists.txt" \
    "$KVS_HOME/pom.xml" -newer "$KVS_ASAN_LIBRARY_STAMP" -print -quit)" ]]
}
