package io.kvs.core.wire;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads testdata/vectors/wire.txt, the file the C++ tests read too. */
final class WireVectors {
  record Vector(
      String name, boolean request, byte[] bytes, boolean invalid, Map<String, String> fields) {}

  private WireVectors() {}

  static List<Vector> load() {
    String dir = System.getProperty("kvs.vectors.dir");
    if (dir == null) {
      throw new IllegalStateException("system property kvs.vectors.dir is not set");
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of(dir, "wire.txt"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<Vector> vectors = new ArrayList<>();
    for (String line : lines) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] parts = line.split(" ");
      if (parts.length < 4 || !(parts[1].equals("request") || parts[1].equals("reply"))) {
        throw new IllegalStateException("malformed vector line: " + line);
      }
      Map<String, String> fields = new LinkedHashMap<>();
      boolean invalid = false;
      for (int i = 3; i < parts.length; i++) {
        if (parts[i].equals("invalid")) {
          invalid = true;
        } else {
          int equals = parts[i].indexOf('=');
          fields.put(parts[i].substring(0, equals), parts[i].substring(equals + 1));
        }
      }
      vectors.add(
          new Vector(
              parts[0], parts[1].equals("request"), unhex(parts[2]), invalid, Map.copyOf(fields)));
    }
    return vectors;
  }

  static byte[] unhex(String hex) {
    return hex.equals("-") ? new byte[0] : HexFormat.of().parseHex(hex);
  }

  static String hex(byte[] bytes) {
    return bytes.length == 0 ? "-" : HexFormat.of().formatHex(bytes);
  }
}
