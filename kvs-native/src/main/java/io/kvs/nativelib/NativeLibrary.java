package io.kvs.nativelib;

import io.kvs.nativelib.internal.NativeMethods;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads libkvs, the native data plane, once per JVM.
 *
 * <p>The library ships inside the kvs-native jar as {@code META-INF/native/<os>-<arch>/libkvs.so}.
 * It is copied to a private temporary file, loaded, and the file is deleted right away (the mapping
 * stays valid), so nothing is left behind. Two system properties change this:
 *
 * <ul>
 *   <li>{@code kvs.native.library}: load this file instead (e.g. a build tree's libkvs.so);
 *   <li>{@code kvs.native.tmpdir}: extract into this directory instead of {@code java.io.tmpdir}
 *       (for hosts whose temporary directory is mounted {@code noexec}).
 * </ul>
 *
 * <p>After loading, the library's version must equal the version this jar was built with, so a
 * stale library is never used by accident. Thread-safe; {@link #load()} is idempotent.
 */
public final class NativeLibrary {
  /** The directory inside the jar that holds one subdirectory per platform. */
  public static final String RESOURCE_ROOT = "META-INF/native/";

  private static final String LIBRARY_FILE = "libkvs.so";
  private static final String VERSION_RESOURCE = "META-INF/kvs/kvs-native.properties";

  private static volatile String loadedFrom;

  private NativeLibrary() {}

  /**
   * Loads the library if it is not loaded yet.
   *
   * @throws NativeLibraryUnavailableException if there is no library for this platform, it cannot
   *     be extracted or loaded, or its version differs from this jar's
   */
  public static void load() {
    if (loadedFrom == null) {
      loadOnce();
    }
  }

  private static synchronized void loadOnce() {
    if (loadedFrom != null) {
      return;
    }
    String override = System.getProperty("kvs.native.library");
    String source;
    if (override != null && !override.isEmpty()) {
      Path path = Paths.get(override).toAbsolutePath();
      loadFile(path);
      source = path.toUri().toString();
    } else {
      source =
          loadFromResource(platform(System.getProperty("os.name"), System.getProperty("os.arch")));
    }
    checkVersion(source);
    loadedFrom = source;
  }

  /** Where the library was loaded from: a {@code jar:} URL, a {@code file:} URL, or null. */
  public static String source() {
    return loadedFrom;
  }

  /** The native library's version; loads the library first. */
  public static String version() {
    load();
    return NativeMethods.version();
  }

  /** One line describing the native build; loads the library first. */
  public static String buildInfo() {
    load();
    return NativeMethods.buildInfo();
  }

  /**
   * The platform directory name for an OS and architecture as the JVM reports them, e.g. {@code
   * linux-x86_64}.
   *
   * @throws NativeLibraryUnavailableException for a platform KVS has no native build for
   */
  static String platform(String osName, String osArch) {
    String os = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
    String arch = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) {
      arch = "x86_64";
    } else if (arch.equals("aarch64") || arch.equals("arm64")) {
      arch = "aarch64";
    }
    if (!os.startsWith("linux") || !(arch.equals("x86_64") || arch.equals("aarch64"))) {
      throw new NativeLibraryUnavailableException(
          "KVS's native library is built for Linux on x86-64 or aarch64 only; this JVM runs on"
              + " OS '"
              + osName
              + "', architecture '"
              + osArch
              + "'");
    }
    return "linux-" + arch;
  }

  private static String loadFromResource(String platform) {
    String resource = RESOURCE_ROOT + platform + "/" + LIBRARY_FILE;
    URL url = NativeLibrary.class.getClassLoader().getResource(resource);
    if (url == null) {
      throw new NativeLibraryUnavailableException(
          "no native library for platform "
              + platform
              + " (OS '"
              + System.getProperty("os.name")
              + "', architecture '"
              + System.getProperty("os.arch")
              + "'): "
              + resource
              + " is missing from the classpath; this kvs-native jar was built for another"
              + " platform");
    }
    Path directory = extractionDirectory();
    Path file = null;
    try {
      file = Files.createTempFile(directory, "libkvs-", ".so");
      try (InputStream in = url.openStream()) {
        Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      }
      loadFile(file);
    } catch (IOException e) {
      throw new NativeLibraryUnavailableException(
          "cannot extract " + resource + " to " + directory + ": " + e.getMessage(), e);
    } finally {
      deleteQuietly(file);
    }
    return url.toString();
  }

  private static Path extractionDirectory() {
    String configured = System.getProperty("kvs.native.tmpdir");
    return Paths.get(
        configured != null && !configured.isEmpty()
            ? configured
            : System.getProperty("java.io.tmpdir"));
  }

  private static void loadFile(Path file) {
    try {
      System.load(file.toString());
    } catch (UnsatisfiedLinkError e) {
      throw new NativeLibraryUnavailableException(
          "cannot load "
              + file
              + " on OS '"
              + System.getProperty("os.name")
              + "', architecture '"
              + System.getProperty("os.arch")
              + "': "
              + e.getMessage()
              + " (if the temporary directory is mounted noexec, set -Dkvs.native.tmpdir)",
          e);
    }
  }

  private static void checkVersion(String source) {
    String expected = expectedVersion();
    String actual = NativeMethods.version();
    if (!expected.equals(actual)) {
      throw new NativeLibraryUnavailableException(
          "native library "
              + source
              + " has version "
              + actual
              + " but this kvs-native jar is version "
              + expected);
    }
  }

  private static String expectedVersion() {
    Properties properties = new Properties();
    try (InputStream in =
        NativeLibrary.class.getClassLoader().getResourceAsStream(VERSION_RESOURCE)) {
      if (in == null) {
        throw new NativeLibraryUnavailableException(VERSION_RESOURCE + " missing from the jar");
      }
      properties.load(in);
    } catch (IOException e) {
      throw new NativeLibraryUnavailableException("cannot read " + VERSION_RESOURCE, e);
    }
    return properties.getProperty("version", "");
  }

  private static void deleteQuietly(Path file) {
    if (file == null) {
      return;
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // The library is loaded already; a leftover temporary file is harmless.
    }
  }
}
