# Helpers shared by the kvs launcher's commands. Sourced, not executed.

# Packages every build needs (Debian names), and the command that proves each
# is present. The JDK is skipped when a JDK 17+ is already on the PATH.
KVS_BUILD_PACKAGES=(maven cmake ninja-build g++ libgtest-dev liburing-dev libfabric-dev libssl-dev openssl librocksdb-dev)
KVS_TEST_PACKAGES=(clang-format docker-compose iptables chromium)
# The fuzz step of ./kvs test: clang, and the runtimes of libFuzzer and the
# sanitizers (libclang_rt.fuzzer etc.), which clang only recommends and so
# must be named here (installs skip recommends). Unversioned names follow
# Debian's default LLVM (14 on Debian 12), matching clang-format.
KVS_FUZZ_PACKAGES=(clang libclang-rt-dev)

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() {
  printf '\033[31mkvs: %s\033[0m\n' "$*" >&2
  exit 1
}

# The Maven command line every build uses: batch mode, no download progress.
mvn_cmd() { mvn -B -ntp "$@"; }

java_major_version() {
  local version
  # Only javac's own line: JAVA_TOOL_OPTIONS makes the JVM print "Picked up ..." first.
  version="$(javac -version 2>&1 | awk '$1 == "javac" {print $2}')" || return 1
  echo "${version%%.*}"
}

# Installs the given Debian packages where missing: through apt-get when run
# as root, otherwise prints the command and stops.
ensure_packages() {
  local wanted=("$@") missing=() package
  if ! command -v javac >/dev/null || [[ "$(java_major_version)" -lt 17 ]]; then
    wanted+=(openjdk-17-jdk-headless)
  fi
  for package in "${wanted[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$package")
    fi
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  command -v apt-get >/dev/null ||
    die "missing system packages (${missing[*]}) and no apt-get: install them with your package manager"
  if [[ $(id -u) -ne 0 ]]; then
    die "missing system packages; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}"
  fi
  say "Installing system packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  note "installed: ${missing[*]}"
}

# The newest modification time (epoch seconds) of the build's inputs.
newest_source_time() {
  find "$KVS_HOME/pom.xml" "$KVS_HOME"/kvs-*/pom.xml "$KVS_HOME"/kvs-*/src \
    "$KVS_HOME/kvs-native/CMakeLists.txt" "$KVS_HOME/kvs-native/include" \
    -type f -printf '%T@\n' 2>/dev/null | sort -n | tail -1 | cut -d. -f1
}

KVS_BUILD_STAMP="$KVS_HOME/kvs-bench/target/.kvs-build-stamp"

# Builds the reactor (without tests) unless the last build is newer than
# every source file.
ensure_built() {
  if [[ -f "$KVS_BUILD_STAMP" ]] &&
    [[ "$(stat -c %Y "$KVS_BUILD_STAMP")" -ge "$(newest_source_time)" ]]; then
    return 0
  fi
  build_all
}

build_all() {
  say "Building KVS (Maven reactor, native library through CMake)"
  (cd "$KVS_HOME" && mvn_cmd -q -DskipTests package) || die "build failed"
  mkdir -p "$(dirname "$KVS_BUILD_STAMP")"
  touch "$KVS_BUILD_STAMP"
  note "built: kvs-native/target/kvs-native-*.jar (with libkvs.so), kvs-bench/target/lib/"
}

# Runs a main class of kvs-bench (which depends on every module) on the JVM.
run_java() {
  local main_class="$1"
  shift
  local jar
  jar="$(ls "$KVS_HOME"/kvs-bench/target/kvs-bench-*.jar 2>/dev/null | head -1)"
  [[ -n "$jar" ]] || die "kvs-bench is not built; run ./kvs build"
  local flags=()
  # JDK 22+ warns about JNI use unless native access is granted explicitly.
  [[ "$(java_major_version)" -ge 22 ]] && flags+=(--enable-native-access=ALL-UNNAMED)
  # Tools talk at WARN; the processes they start log at INFO to their own files.
  flags+=("-Dkvs.log.level=${KVS_LOG_LEVEL:-WARN}")
  # KVS_JAVA_WRAPPER: a command the JVM runs under, e.g. nsenter into a network namespace
  # (./kvs chaos); KVS_JAVA_FLAGS: more JVM flags (./kvs chaos's pause log); both split on spaces.
  # KVS_JAVA_EXEC=1: the JVM replaces this shell (./kvs run: signals reach it directly).
  local exec_java=()
  [[ -n "${KVS_JAVA_EXEC:-}" ]] && exec_java=(exec)
  # shellcheck disable=SC2086
  "${exec_java[@]}" ${KVS_JAVA_WRAPPER:-} java "${flags[@]}" ${KVS_JAVA_FLAGS:-} -cp "$jar:$KVS_HOME/kvs-bench/target/lib/*" "$main_class" "$@"
}
