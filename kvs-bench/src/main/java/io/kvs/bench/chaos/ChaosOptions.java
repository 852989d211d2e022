package io.kvs.bench.chaos;

import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The campaign's options ({@code ./kvs chaos [--seed N] [--minutes M] [--quick] ...}).
 *
 * @param seed the schedule's seed (drawn and printed when not given)
 * @param quick the short profile: every kind once, shorter faults (about 3 minutes of faults)
 * @param minutes how long the full profile injects faults (default 60)
 * @param clients independent clients of the recorded load (default 4)
 * @param keys keys of the recorded load (default 512 for the quick profile, 4096 for the full one:
 *     a key's history stays short enough for the checker's search however long the run)
 * @param opsPerSecond the most operations a second each client issues (default 150)
 * @param sessionTimeoutMillis the region servers' ZooKeeper session timeout (default 4000)
 * @param maxUnavailableMillis the longest a region may fail every client who asks before the run
 *     fails; 0 (the default) reports it without a bound
 * @param diskMib size of each server's loop-mounted file system (default 4096, sparse)
 * @param kinds the kinds of fault the schedule draws from (default: every kind)
 * @param fabric the servers' replication transport ({@code ./kvs local start --fabric}: {@code
 *     stream}, the default, {@code tcp} or {@code shm})
 * @param dryRun print the schedule (the quick one whole, the full one's first 50 steps) and stop
 * @param outDir where {@code chaos.json} and {@code chaos.png} go (default target/bench)
 * @param dataDir where the cluster and its disks live (default target/bench/data)
 */
record ChaosOptions(
    long seed,
    boolean quick,
    int minutes,
    int clients,
    int keys,
    int opsPerSecond,
    int sessionTimeoutMillis,
    long maxUnavailableMillis,
    int diskMib,
    java.util.List<FaultKind> kinds,
    String fabric,
    boolean dryRun,
    Path outDir,
    Path dataDir) {
  static final String USAGE =
      "usage: ./kvs chaos [--seed N] [--minutes M] [--quick] [--clients N] [--keys N]"
          + " [--rate OPS_PER_CLIENT] [--session-timeout-ms MS] [--max-unavailable-ms MS]"
          + " [--disk-mib MIB] [--kinds KIND,...] [--fabric tcp|shm|stream] [--dry-run]"
          + " [--out-dir DIR] [--data-dir DIR]";

  static ChaosOptions parse(String[] args) {
    Long seed = null;
    boolean quick = false;
    boolean dryRun = false;
    int minutes = 60;
    int clients = 4;
    Integer keys = null;
    int rate = 150;
    int session = 4000;
    long maxUnavailable = 0;
    int diskMib = 4096;
    java.util.List<FaultKind> kinds = FaultKind.all();
    String fabric = "stream";
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--quick")) {
        quick = true;
        continue;
      }
      if (arg.equals("--dry-run")) {
        dryRun = true;
        continue;
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("missing value of " + arg);
      }
      String value = args[++i];
      switch (arg) {
        case "--seed" -> seed = Long.parseLong(value);
        case "--minutes" -> minutes = positive(arg, value);
        case "--clients" -> clients = positive(arg, value);
        case "--keys" -> keys = positive(arg, value);
        case "--rate" -> rate = positive(arg, value);
        case "--session-timeout-ms" -> session = positive(arg, value);
        case "--max-unavailable-ms" -> maxUnavailable = Long.parseLong(value);
        case "--disk-mib" -> diskMib = positive(arg, value);
        case "--kinds" ->
            kinds =
                java.util.Arrays.stream(value.split(","))
                    .map(String::trim)
                    .map(FaultKind::of)
                    .distinct()
                    .toList();
        case "--fabric" -> {
          if (!value.equals("tcp") && !value.equals("shm") && !value.equals("stream")) {
            throw new IllegalArgumentException("--fabric is tcp, shm or stream, not " + value);
          }
          fabric = value;
        }
        case "--out-dir" -> outDir = Paths.get(value);
        case "--data-dir" -> dataDir = Paths.get(value);
        default -> throw new IllegalArgumentException("unknown option " + arg);
      }
    }
    if (keys == null) {
      keys = quick ? 512 : 4096;
    }
    if (keys < 16) {
      throw new IllegalArgumentException("--keys must be at least 16");
    }
    if (diskMib < 256) {
      throw new IllegalArgumentException("--disk-mib must be at least 256");
    }
    long chosen = seed != null ? seed : System.nanoTime() & 0xffff_ffffL;
    return new ChaosOptions(
        chosen,
        quick,
        minutes,
        clients,
        keys,
        rate,
        session,
        maxUnavailable,
        diskMib,
        kinds,
        fabric,
        dryRun,
        outDir,
        dataDir);
  }

  /** The command that replays this run's schedule. */
  String replay() {
    StringBuilder command = new StringBuilder("./kvs chaos --seed ").append(seed);
    command.append(quick ? " --quick" : " --minutes " + minutes);
    if (!kinds.equals(FaultKind.all())) {
      command
          .append(" --kinds ")
          .append(String.join(",", kinds.stream().map(kind -> kind.label).toList()));
    }
    if (sessionTimeoutMillis != 4000) {
      command.append(" --session-timeout-ms ").append(sessionTimeoutMillis);
    }
    if (!fabric.equals("stream")) {
      command.append(" --fabric ").append(fabric);
    }
    return command.toString();
  }

  private static int positive(String flag, String value) {
    int parsed = Integer.parseInt(value);
    if (parsed < 1) {
      throw new IllegalArgumentException(flag + " must be positive, not " + value);
    }
    return parsed;
  }
}
