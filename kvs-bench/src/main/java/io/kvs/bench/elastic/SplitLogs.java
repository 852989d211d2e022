package io.kvs.bench.elastic;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where a split's time goes, from the cluster's logs (every line starts {@code HH:mm:ss.SSS}; the
 * processes share this machine's clock): the master asking the primary to seal ("sealing it for its
 * split") until the primary sealed it ("sealed region R ... for its split"), the seal until the
 * master's commit ("split region R at"), and the daughters' opens on their primary ("opened region
 * D ... split from R as PRIMARY ... in N ms", the local split included; "split region R ... into A
 * and B in N ms" alone).
 */
record SplitLogs(
    List<Long> sealMillis,
    List<Long> commitMillis,
    List<Long> localSplitMillis,
    List<Long> primaryOpenMillis) {
  private static final Pattern TIME = Pattern.compile("^(\\d\\d):(\\d\\d):(\\d\\d)\\.(\\d\\d\\d) ");
  private static final Pattern SEALING = Pattern.compile("Splits - region (\\d+) .*: sealing it");
  private static final Pattern COMMITTED = Pattern.compile("Splits - split region (\\d+) at ");
  private static final Pattern SEALED = Pattern.compile("sealed region (\\d+) .* for its split at");
  private static final Pattern LOCAL_SPLIT =
      Pattern.compile("split region \\d+ at .* into \\d+ and \\d+ in (\\d+) ms");
  private static final Pattern PRIMARY_OPEN =
      Pattern.compile("opened region \\d+ .* split from \\d+ as PRIMARY .* in (\\d+) ms");

  /** Reads {@code logs/master-*.log} and {@code logs/server-*.log}; empty lists if none. */
  static SplitLogs read(Path logs) throws IOException {
    Map<Long, Long> sealing = new HashMap<>();
    Map<Long, Long> sealed = new HashMap<>();
    Map<Long, Long> committed = new HashMap<>();
    List<Long> local = new ArrayList<>();
    List<Long> opens = new ArrayList<>();
    for (Path file : files(logs, "master-m\\d+\\.log")) {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        long at = millisOfDay(line);
        Matcher asked = SEALING.matcher(line);
        if (at >= 0 && asked.find()) {
          sealing.put(Long.parseLong(asked.group(1)), at);
        }
        Matcher commit = COMMITTED.matcher(line);
        if (at >= 0 && commit.find()) {
          committed.put(Long.parseLong(commit.group(1)), at);
        }
      }
    }
    for (Path file : files(logs, "server-s\\d+\\.log")) {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        long at = millisOfDay(line);
        Matcher seal = SEALED.matcher(line);
        if (at >= 0 && seal.find()) {
          sealed.put(Long.parseLong(seal.group(1)), at);
        }
        Matcher split = LOCAL_SPLIT.matcher(line);
        if (split.find()) {
          local.add(Long.parseLong(split.group(1)));
        }
        Matcher open = PRIMARY_OPEN.matcher(line);
        if (open.find()) {
          opens.add(Long.parseLong(open.group(1)));
        }
      }
    }
    List<Long> seals = new ArrayList<>();
    List<Long> commits = new ArrayList<>();
    committed.forEach(
        (region, commit) -> {
          Long asked = sealing.get(region);
          Long done = sealed.get(region);
          if (asked != null && done != null && done >= asked && commit >= done) {
            seals.add(done - asked);
            commits.add(commit - done);
          }
        });
    return new SplitLogs(seals, commits, local, opens);
  }

  private static List<Path> files(Path logs, String name) throws IOException {
    if (!Files.isDirectory(logs)) {
      return List.of();
    }
    try (Stream<Path> listed = Files.list(logs)) {
      return listed.filter(f -> f.getFileName().toString().matches(name)).sorted().toList();
    }
  }

  /** The line's time of day in milliseconds, or -1 if it does not start with one. */
  private static long millisOfDay(String line) {
    Matcher time = TIME.matcher(line);
    if (!time.find()) {
      return -1;
    }
    return ((Long.parseLong(time.group(1)) * 60 + Long.parseLong(time.group(2))) * 60
                + Long.parseLong(time.group(3)))
            * 1000
        + Long.parseLong(time.group(4));
  }
}
