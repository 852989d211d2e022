# summary: build everything: the Maven reactor, libkvs through CMake, the jars
cmd_build() {
  ensure_packages "${KVS_BUILD_PACKAGES[@]}"
  build_all
}
