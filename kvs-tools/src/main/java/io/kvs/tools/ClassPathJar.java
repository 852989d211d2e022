package io.kvs.tools;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * A jar holding nothing but a manifest whose {@code Class-Path} is a whole class path: a JVM
 * started with {@code -cp that.jar} sees the same classes through a short command line.
 *
 * <p>Why: {@code io.kvs.tools.local.LocalCluster} recognises its processes by their command line
 * (it must name an {@code io.kvs.} class), and the JDK reads at most 4,096 bytes of a process's
 * command line on Linux; behind a long class path the main class is cut off, so {@code stop} and
 * {@code status} would take the cluster's processes for strangers and leave them running. The
 * cluster's processes inherit the class path of the tool that starts them ({@code
 * java.class.path}), so starting the tool with this jar keeps every command line short.
 */
public final class ClassPathJar {
  private ClassPathJar() {}

  /**
   * Writes {@code jar} with {@code classPath} (entries separated by {@link File#pathSeparator}) as
   * its manifest's class path; returns {@code jar}.
   */
  public static Path write(Path jar, String classPath) throws IOException {
    List<String> urls = new ArrayList<>();
    for (String entry : classPath.split(File.pathSeparator)) {
      if (!entry.isEmpty()) {
        // toUri() ends directories with a slash, as a class path URL must.
        urls.add(Path.of(entry).toAbsolutePath().toUri().toString());
      }
    }
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, String.join(" ", urls));
    Files.createDirectories(jar.toAbsolutePath().getParent());
    Path temporary = jar.resolveSibling(jar.getFileName() + ".tmp");
    try (OutputStream file = Files.newOutputStream(temporary);
        JarOutputStream out = new JarOutputStream(file, manifest)) {
      out.flush();
    }
    Files.move(temporary, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return jar;
  }
}
