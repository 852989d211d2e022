package io.kvs.nativelib;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.StatusCode;
import io.kvs.nativelib.internal.NativeMethods;
import java.io.InputStream;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class NativeLibraryTest {
  @Test
  void mapsJvmPlatformNamesToResourceDirectories() {
    assertThat(NativeLibrary.platform("Linux", "amd64")).isEqualTo("linux-x86_64");
    assertThat(NativeLibrary.platform("Linux", "x86_64")).isEqualTo("linux-x86_64");
    assertThat(NativeLibrary.platform("Linux", "aarch64")).isEqualTo("linux-aarch64");
  }

  @Test
  void unsupportedPlatformErrorNamesOsAndArchitecture() {
    assertThatThrownBy(() -> NativeLibrary.platform("Mac OS X", "aarch64"))
        .isInstanceOf(NativeLibraryUnavailableException.class)
        .hasMessageContaining("OS 'Mac OS X'")
        .hasMessageContaining("architecture 'aarch64'");
    assertThatThrownBy(() -> NativeLibrary.platform("Linux", "ppc64le"))
        .isInstanceOf(NativeLibraryUnavailableException.class)
        .hasMessageContaining("architecture 'ppc64le'");
  }

  @Test
  void loadsOnceAndReportsTheJarVersion() throws Exception {
    NativeLibrary.load();
    String firstSource = NativeLibrary.source();
    NativeLibrary.load();
    assertThat(NativeLibrary.source()).isNotNull().isSameAs(firstSource);

    Properties properties = new Properties();
    try (InputStream in =
        getClass().getClassLoader().getResourceAsStream("META-INF/kvs/kvs-native.properties")) {
      properties.load(in);
    }
    assertThat(properties.getProperty("version")).isNotBlank().doesNotContain("${");
    assertThat(NativeLibrary.version()).isEqualTo(properties.getProperty("version"));
    assertThat(NativeMethods.abiVersion()).isEqualTo(1);
    assertThat(NativeLibrary.buildInfo()).startsWith("kvs " + NativeLibrary.version());
  }

  @Test
  void statusCodesAgreeWithTheCAbi() {
    NativeLibrary.load();
    for (StatusCode status : StatusCode.values()) {
      assertThat(NativeMethods.statusName(status.code())).isEqualTo(status.name());
    }
    assertThat(NativeMethods.statusName(StatusCode.values().length)).isEqualTo("UNKNOWN");
  }
}
