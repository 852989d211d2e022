package io.kvs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClassPathJarTest {
  @TempDir Path dir;

  @Test
  void aJarOfNothingButTheClassPathSeesEveryClass() throws Exception {
    Path jar =
        ClassPathJar.write(dir.resolve("classpath.jar"), System.getProperty("java.class.path"));
    try (JarFile file = new JarFile(jar.toFile())) {
      assertThat(file.getManifest().getMainAttributes().getValue("Class-Path"))
          .startsWith("file:/")
          .contains(" file:/");
    }
    try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
      // From a dependency jar, from this module's classes, and from its test classes.
      assertThat(loader.loadClass("io.kvs.tools.local.LocalCluster")).isNotNull();
      assertThat(loader.loadClass(ClassPathJar.class.getName())).isNotSameAs(ClassPathJar.class);
      assertThat(loader.loadClass(ClassPathJarTest.class.getName())).isNotNull();
    }
  }
}
