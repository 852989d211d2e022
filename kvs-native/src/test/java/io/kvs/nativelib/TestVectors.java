package io.kvs.nativelib;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Reads the shared vector files under testdata/vectors, the same files the C++ tests read. */
final class TestVectors {
  record Crc32cVector(String name, byte[] input, int expected) {}

  private TestVectors() {}

  static Path directory() {
    String dir = System.getProperty("kvs.vectors.dir");
    if (dir == null) {
      throw new IllegalStateException("system property kvs.vectors.dir is not set");
    }
    return Paths.get(dir);
  }

  static List<Crc32cVector> crc32c() {
    List<Crc32cVector> vectors = new ArrayList<>();
    try {
      for (String line :
          Files.readAllLines(directory().resolve("crc32c.txt"), StandardCharsets.UTF_8)) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        String[] fields = line.trim().split("\\s+");
        if (fields.length != 3) {
          throw new IllegalStateException("malformed vector line: " + line);
        }
        byte[] input = fields[1].equals("-") ? new byte[0] : HexFormat.of().parseHex(fields[1]);
        vectors.add(new Crc32cVector(fields[0], input, Integer.parseUnsignedInt(fields[2], 16)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return vectors;
  }
}
