package io.kvs.nativelib;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Runs under Failsafe against the packaged kvs-native jar (not target/classes): proves the jar
 * carries libkvs.so and that the loader extracts and loads it from there.
 */
class NativeLibraryJarIT {
  @Test
  void loadsLibkvsFromInsideTheJarAndChecksumsVectors() {
    NativeLibrary.load();
    assertThat(NativeLibrary.source())
        .startsWith("jar:file:")
        .contains("kvs-native-")
        .endsWith(".jar!/META-INF/native/linux-x86_64/libkvs.so");
    for (TestVectors.Crc32cVector vector : TestVectors.crc32c()) {
      assertThat(Crc32c.compute(vector.input())).as(vector.name()).isEqualTo(vector.expected());
    }
  }
}
