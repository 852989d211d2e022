# summary: build libkvs with AddressSanitizer + UBSan for region server JVMs; print its path
#
# Builds kvs-native/target/native-sanitize/libkvs.so (clang, shared sanitizer
# runtimes; the build ./kvs test runs the native tests and fuzzers from, see
# scripts/lib/sanitize.sh) unless it is up to date (built after the last
# change to its sources: then without waiting for the rest of that build),
# and prints its path as the last line of standard output, the build's own
# output going to standard error. Run a local cluster's region servers on it with
#   ./kvs local start --native-library "$(./kvs asan-library | tail -1)"
# (sanitizer reports then land in <dir>/logs/server-<id>.sanitizer.<pid>).
# shellcheck source=scripts/lib/sanitize.sh
source "$KVS_HOME/scripts/lib/sanitize.sh"

cmd_asan_library() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}" "${KVS_FUZZ_PACKAGES[@]}"
  if ! asan_library_current; then
    build_asan_library >&2 || die "the AddressSanitizer build of libkvs failed"
  fi
  echo "$KVS_ASAN_LIBRARY"
}
