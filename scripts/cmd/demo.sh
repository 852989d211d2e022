# summary: build what is missing and run the demo (today: the native data plane self-check)
cmd_demo() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  ensure_built
  say "Running the demo: libkvs loaded from the kvs-native jar through JNI"
  note "The cluster does not exist yet; this runs the most real part that does: the native"
  note "library, its CRC32C (the checksum of every KVS format) against the published check"
  note "value, and its throughput next to the JDK's."
  echo
  run_java io.kvs.bench.NativeDemo "$@"
}
