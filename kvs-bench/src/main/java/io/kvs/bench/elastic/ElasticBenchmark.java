package io.kvs.bench.elastic;

import io.kvs.bench.LineChart;
import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.JsonLine;
import io.kvs.tools.LaunchedCluster;
import io.kvs.tools.TextTable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * {@code ./kvs bench elastic [--quick]}: a local cluster of processes (ZooKeeper, a master, three
 * region servers, replication 2, send-index) that starts with one region and every elastic default
 * -- the master splits by size, stepping up from {@code --split-first-size} (2 MiB) times the cube
 * of the regions a primary leads to {@code --split-size}, and its balancer spreads replicas and
 * leadership -- is loaded by client threads with N keys while a hot key range takes a share of the
 * writes ({@link ElasticLoad}); once loaded (and balanced, or out of time) a fourth server joins.
 *
 * <p>Measured: the regions over time; the time to the first split, until every server leads a
 * region and until the cluster is balanced (no replica move half done, the replicas in sync each
 * server holds within one of each other, leadership counts within two: a hot region weighs more
 * than one); throughput before, during and after the splits and the join; and for every split (and
 * every handover of leadership) the gap in availability of its key range as the clients saw it
 * ({@link Gaps}), p50, p99 and max; after the join the time until the new server holds its first
 * replica, leads its first region and holds its share (the cluster balanced over four servers).
 * Where a split's time goes (the seal, the commit, the daughters' opens) comes from the cluster's
 * logs ({@link SplitLogs}).
 *
 * <p>Prints a table, writes JSON lines to {@code target/bench/elastic.json} (one per split, merge
 * and handover, {@code "type":"change"}; one per second, {@code "type":"second"}, with the regions
 * and acknowledged operations; one {@code "type":"summary"}) and draws the regions and throughput
 * over time ({@code elastic.png}).
 *
 * <p>Usage: {@code [--quick] [--keys N] [--value-bytes N] [--clients N] [--split-size BYTES]
 * [--load-timeout-s S] [--balance-timeout-s S] [--join-timeout-s S] [--out-dir DIR] [--data-dir
 * DIR]}. Full: 2,000,000 keys of 1,000 bytes; quick: 200,000. Both with the master's default split
 * sizes (its steps from 2 MiB show a dozen splits in the quick run already: a 16 MiB {@code
 * --split-size} made it split every two seconds, a hot region over and over, and starved the
 * balancer); {@code --split-size} sets another.
 */
public final class ElasticBenchmark {
  private static final int SERVERS = 3;
  private static final int REPLICATION = 2;
  private static final String JOINING = "s4";
  private static final Duration WHOLE_TIMEOUT = Duration.ofSeconds(120);
  // The load keeps running this long after the new server holds its share: throughput after.
  private static final Duration AFTER = Duration.ofSeconds(10);
  // The settle phase after the load lasts at least this long: the hot range's overwrites go on
  // growing it, so splits go on too (size counts versions not compacted away yet).
  private static final Duration SETTLE_MIN = Duration.ofSeconds(30);
  // How long after a split its daughters' catch-ups weigh on throughput (their primary syncs
  // each write until its backup is in sync), for the throughput near splits.
  private static final Duration AFTER_SPLIT = Duration.ofSeconds(5);
  // Around each change of the map, the window in which its range's operations are measured.
  private static final Duration GAP_WINDOW = Duration.ofMillis(1500);
  private static final int OPERATIONS_LOGGED_MAX = 24 << 20;
  private static final long MIB = 1 << 20;

  private record Options(
      boolean quick,
      int keys,
      int valueBytes,
      int clients,
      long splitSize,
      Duration loadTimeout,
      Duration balanceTimeout,
      Duration joinTimeout,
      Path outDir,
      Path dataDir) {}

  public static void main(String[] args) throws Exception {
    boolean quick = false;
    Integer keys = null;
    int valueBytes = 1000;
    int clients = 4;
    Long splitSize = null;
    Integer loadTimeout = null;
    Integer balanceTimeout = null;
    Integer joinTimeout = null;
    Path outDir = Paths.get("target", "bench");
    Path dataDir = Paths.get("target", "bench", "data");
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> quick = true;
        case "--keys" -> keys = Integer.parseInt(args[++i]);
        case "--value-bytes" -> valueBytes = Integer.parseInt(args[++i]);
        case "--clients" -> clients = Integer.parseInt(args[++i]);
        case "--split-size" -> splitSize = Long.parseLong(args[++i]);
        case "--load-timeout-s" -> loadTimeout = Integer.parseInt(args[++i]);
        case "--balance-timeout-s" -> balanceTimeout = Integer.parseInt(args[++i]);
        case "--join-timeout-s" -> joinTimeout = Integer.parseInt(args[++i]);
        case "--out-dir" -> outDir = Paths.get(args[++i]);
        case "--data-dir" -> dataDir = Paths.get(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    Options options =
        new Options(
            quick,
            keys != null ? keys : quick ? 200_000 : 2_000_000,
            valueBytes,
            clients,
            splitSize != null ? splitSize : 0,
            Duration.ofSeconds(loadTimeout != null ? loadTimeout : quick ? 150 : 1200),
            Duration.ofSeconds(balanceTimeout != null ? balanceTimeout : quick ? 45 : 180),
            Duration.ofSeconds(joinTimeout != null ? joinTimeout : quick ? 90 : 300),
            outDir,
            dataDir);
    new ElasticBenchmark().run(options);
  }

  /** The first moments (nanoseconds since the log's origin, -1 until then) the run reached. */
  private static final class Milestones {
    long everyServerLeads = -1;
    long balanced = -1;
    long joinedReplica = -1;
    long joinedLeads = -1;
    long joinedShare = -1;
    boolean joined;

    void update(RegionMap map, long now) {
      List<String> first = servers(SERVERS);
      if (everyServerLeads < 0 && leads(map, first).values().stream().allMatch(n -> n > 0)) {
        everyServerLeads = now;
      }
      if (balanced < 0 && balanced(map, first)) {
        balanced = now;
      }
      if (!joined) {
        return;
      }
      if (joinedReplica < 0
          && map.regions().stream().anyMatch(r -> r.members().contains(JOINING))) {
        joinedReplica = now;
      }
      if (joinedLeads < 0 && map.regions().stream().anyMatch(r -> r.primary().equals(JOINING))) {
        joinedLeads = now;
      }
      if (joinedShare < 0 && balanced(map, servers(SERVERS + 1))) {
        joinedShare = now;
      }
    }
  }

  private void run(Options options) throws Exception {
    Files.createDirectories(options.outDir());
    Path dir = options.dataDir().resolve("elastic");
    List<String> start =
        new ArrayList<>(
            List.of(
                "--servers",
                Integer.toString(SERVERS),
                "--regions",
                "1",
                "--replication",
                Integer.toString(REPLICATION),
                "--mode",
                "send-index"));
    if (options.splitSize() > 0) {
      start.addAll(List.of("--split-size", Long.toString(options.splitSize())));
    }
    String setup =
        String.format(
            Locale.ROOT,
            "%d servers, RF %d, send-index, 1 region at the start; splits at 2 MiB x (regions"
                + " its primary leads)^3 up to %s; balancer on (10 s rounds)",
            SERVERS,
            REPLICATION,
            options.splitSize() > 0 ? options.splitSize() / MIB + " MiB" : "256 MiB (default)");
    String loadText =
        String.format(
            Locale.ROOT,
            "%,d keys of %d B from %d clients: %d %% inserts, %d %% writes to a hot range"
                + " (%,d keys in 1/256 of the key space), the rest reads of it",
            options.keys(),
            options.valueBytes(),
            options.clients(),
            ElasticLoad.INSERT_PERCENT,
            ElasticLoad.HOT_WRITE_PERCENT,
            LoadKeys.HOT_KEYS);
    System.out.println("elastic: " + setup);
    System.out.println("elastic: " + loadText);
    System.out.printf("starting a cluster in %s%n", dir);
    OperationLog log = new OperationLog(OPERATIONS_LOGGED_MAX, System.nanoTime());
    Milestones milestones = new Milestones();
    List<String> notes = new ArrayList<>();
    long loadStart;
    long loadEnd;
    long joinAt;
    long end;
    int loadedKeys;
    List<MapWatch.Change> changes;
    double[] regionsPerSecond;
    RegionMap last;
    try (LaunchedCluster cluster = LaunchedCluster.start(dir, start, () -> {})) {
      String[] connect = cluster.connect();
      try (KvsClient client =
          KvsClient.builder()
              .zookeeper(connect[0])
              .cluster(connect[1])
              .transport(Transport.TCP)
              .operationTimeout(Duration.ofSeconds(10))
              .security(SecurityOptions.forClusterDirectory(cluster.dir(), "client"))
              .build()) {
        await(
            "the region open with its whole group",
            WHOLE_TIMEOUT,
            () -> whole(client.regionMap()),
            () -> {});
        MapWatch watch = new MapWatch(client::regionMap, log);
        Runnable track = () -> milestones.update(watch.latest(), log.now());
        ElasticLoad load = new ElasticLoad(client, log, options.keys(), options.valueBytes());
        try {
          loadStart = log.now();
          load.start(options.clients());
          if (!await("every key loaded", options.loadTimeout(), load::loaded, track)) {
            load.stopInserting();
            notes.add("load stopped after " + options.loadTimeout().toSeconds() + " s");
          }
          loadEnd = log.now();
          loadedKeys = load.inserted();
          System.out.printf(
              Locale.ROOT,
              "loaded %,d keys in %.1f s; %d regions%n",
              loadedKeys,
              (loadEnd - loadStart) / 1e9,
              watch.latest().size());
          long settleUntil = loadEnd + SETTLE_MIN.toNanos();
          if (!await(
              "a balanced cluster after the load",
              options.balanceTimeout(),
              () -> milestones.balanced >= 0 && log.now() >= settleUntil,
              track)) {
            notes.add("not balanced " + options.balanceTimeout().toSeconds() + " s after the load");
          }
          joinAt = log.now();
          milestones.joined = true;
          cluster.run("join", JOINING);
          System.out.printf(
              Locale.ROOT, "%s joined at %.1f s; waiting for its share%n", JOINING, joinAt / 1e9);
          if (!await(
              JOINING + " holding its share (the cluster balanced over four servers)",
              options.joinTimeout(),
              () -> milestones.joinedShare >= 0,
              track)) {
            notes.add(
                JOINING
                    + " not holding its share "
                    + options.joinTimeout().toSeconds()
                    + " s after it started");
          }
          long afterUntil = log.now() + AFTER.toNanos();
          await(
              "the load after the join",
              AFTER.plusSeconds(1),
              () -> log.now() >= afterUntil,
              track);
        } finally {
          load.stop();
          watch.stop();
        }
        end = log.now();
        changes = watch.changes();
        regionsPerSecond = watch.regionsPerSecond((int) (end / 1_000_000_000L));
        last = watch.latest();
      }
      // Stop before reading the logs: nothing writes them any more.
      cluster.stop();
    }
    Report report =
        new Report(
            options,
            setup,
            loadText,
            log,
            milestones,
            notes,
            loadStart,
            loadEnd,
            joinAt,
            end,
            loadedKeys,
            changes,
            regionsPerSecond,
            last,
            SplitLogs.read(dir.resolve("logs")));
    report.write();
  }

  /** What the run measured, and how it is printed, written and drawn. */
  private record Report(
      Options options,
      String setup,
      String loadText,
      OperationLog log,
      Milestones milestones,
      List<String> notes,
      long loadStart,
      long loadEnd,
      long joinAt,
      long end,
      int loadedKeys,
      List<MapWatch.Change> changes,
      double[] regionsPerSecond,
      RegionMap last,
      SplitLogs splitLogs) {

    void write() throws IOException {
      Gaps gaps = new Gaps(log, GAP_WINDOW.toNanos());
      List<JsonLine> lines = new ArrayList<>();
      List<Long> splitGaps = new ArrayList<>();
      List<Long> splitWaits = new ArrayList<>();
      List<Long> handoverGaps = new ArrayList<>();
      List<Long> joinHandoverGaps = new ArrayList<>();
      List<Double> splitSeconds = new ArrayList<>();
      int splits = 0;
      int merges = 0;
      int handovers = 0;
      int failedAroundSplits = 0;
      long firstSplit = -1;
      for (MapWatch.Change change : changes) {
        Gaps.Gap gap = gaps.around(change.atNanos(), change.start(), change.end());
        boolean afterJoin = change.atNanos() >= joinAt;
        switch (change.kind()) {
          case SPLIT -> {
            splits++;
            firstSplit = firstSplit < 0 ? change.atNanos() : firstSplit;
            splitSeconds.add(change.atNanos() / 1e9);
            if (gap.operations() > 0) {
              splitGaps.add(gap.unavailableMs());
              splitWaits.add(gap.longestWaitMs());
            }
            failedAroundSplits += gap.failed();
          }
          case MERGE -> merges++;
          case HANDOVER -> {
            handovers++;
            if (gap.operations() > 0) {
              (afterJoin ? joinHandoverGaps : handoverGaps).add(gap.unavailableMs());
            }
          }
        }
        lines.add(
            new JsonLine()
                .put("type", "change")
                .put("kind", change.kind().name().toLowerCase(Locale.ROOT))
                .put("at_s", round(change.atNanos() / 1e9))
                .put("seen_s", round(change.seenNanos() / 1e9))
                .put("what", change.what())
                .put("after_join", afterJoin)
                .put("unavailable_ms", gap.unavailableMs())
                .put("longest_wait_ms", gap.longestWaitMs())
                .put("longest_gap_ms", gap.longestGapMs())
                .put("operations", gap.operations())
                .put("failed", gap.failed()));
        System.out.printf(
            Locale.ROOT,
            "%7.1f s  %-8s %-40s unavailable %5d ms (longest wait %d, gap %d from %s; %d ops, %d"
                + " failed)%n",
            change.atNanos() / 1e9,
            change.kind().name().toLowerCase(Locale.ROOT),
            change.what(),
            gap.unavailableMs(),
            gap.longestWaitMs(),
            gap.longestGapMs(),
            gap.gapFromNanos() < 0 ? "-" : wallClock(log.wallMillis(gap.gapFromNanos())),
            gap.operations(),
            gap.failed());
      }
      int seconds = (int) (end / 1_000_000_000L);
      double[] perSecond = log.perSecond(seconds);
      for (int second = 0; second < seconds; second++) {
        lines.add(
            new JsonLine()
                .put("type", "second")
                .put("second", second)
                .put("regions", (int) regionsPerSecond[second])
                .put("ops", (long) perSecond[second]));
      }
      long share = milestones.joinedShare;
      long splitEnd = firstSplit < 0 ? loadEnd : firstSplit;
      double before = log.throughput(loadStart, splitEnd);
      double nearSplits = secondsNear(perSecond, splitSeconds, splitEnd, joinAt, true);
      double awayFromSplits = secondsNear(perSecond, splitSeconds, splitEnd, joinAt, false);
      double settled = log.throughput(loadEnd, joinAt);
      double joining = log.throughput(joinAt, share < 0 ? end : share);
      double afterJoin = share < 0 ? 0 : log.throughput(share, end);
      Map<String, Integer> replicas = count(last, true);
      Map<String, Integer> leads = count(last, false);

      TextTable table = new TextTable(2, "measure", "value");
      table.row("setup", setup);
      table.row("load", loadText);
      table.separator();
      table.row(
          "keys loaded",
          String.format(
              Locale.ROOT,
              "%,d in %.1f s (%,.0f ops/s)",
              loadedKeys,
              (loadEnd - loadStart) / 1e9,
              log.throughput(loadStart, loadEnd)));
      table.row(
          "regions",
          String.format(
              Locale.ROOT,
              "1 -> %d after the load -> %d at the join -> %d at the end (%d splits, %d merges,"
                  + " %d handovers)",
              (int) regionsPerSecond[Math.min(seconds - 1, (int) (loadEnd / 1_000_000_000L))],
              (int) regionsPerSecond[Math.min(seconds - 1, (int) (joinAt / 1_000_000_000L))],
              last.size(),
              splits,
              merges,
              handovers));
      table.row("first split", at(firstSplit, loadStart));
      table.row("every server leads", at(milestones.everyServerLeads, loadStart));
      table.row("balanced (3 servers)", at(milestones.balanced, loadStart));
      table.row("split unavailability ms", percentiles(splitGaps));
      table.row("  longest wait of an op", percentiles(splitWaits));
      table.row("  ops failed around splits", Integer.toString(failedAroundSplits));
      table.row("  master: seal asked -> sealed ms", percentiles(splitLogs.sealMillis()));
      table.row("  sealed -> committed ms", percentiles(splitLogs.commitMillis()));
      table.row("  daughter's open on its primary ms", percentiles(splitLogs.primaryOpenMillis()));
      table.row("    of which the local split ms", percentiles(splitLogs.localSplitMillis()));
      table.row("handover unavailability ms", percentiles(handoverGaps));
      table.separator();
      table.row("ops/s before the 1st split", String.format(Locale.ROOT, "%,.0f", before));
      table.row(
          "  then to the join: near a split",
          String.format(Locale.ROOT, "%,.0f (1 s before to 5 s after one)", nearSplits));
      table.row(
          "  then to the join: other seconds", String.format(Locale.ROOT, "%,.0f", awayFromSplits));
      table.row("ops/s after the load, to the join", String.format(Locale.ROOT, "%,.0f", settled));
      table.row("ops/s join -> its share", String.format(Locale.ROOT, "%,.0f", joining));
      table.row(
          "ops/s after its share",
          share < 0 ? "-" : String.format(Locale.ROOT, "%,.0f", afterJoin));
      table.separator();
      table.row(JOINING + " joins at", String.format(Locale.ROOT, "%.1f s", joinAt / 1e9));
      table.row("  its first replica", after(milestones.joinedReplica, joinAt));
      table.row("  leads its first region", after(milestones.joinedLeads, joinAt));
      table.row("  holds its share", after(share, joinAt));
      table.row("  handover unavailability ms", percentiles(joinHandoverGaps));
      table.row("at the end: replicas", replicas.toString());
      table.row("  leads", leads.toString());
      if (!notes.isEmpty()) {
        table.row("not reached", String.join("; ", notes));
      }
      if (log.dropped() > 0) {
        table.row("operations not logged", Long.toString(log.dropped()));
      }
      System.out.println();
      System.out.println(table);

      lines.add(
          new JsonLine()
              .put("type", "summary")
              .put("keys", loadedKeys)
              .put("value_bytes", options.valueBytes())
              .put("clients", options.clients())
              .put("split_size", options.splitSize())
              .put("load_s", round((loadEnd - loadStart) / 1e9))
              .put("regions_end", last.size())
              .put("splits", splits)
              .put("merges", merges)
              .put("first_split_s", seconds(firstSplit, loadStart))
              .put("every_server_leads_s", seconds(milestones.everyServerLeads, loadStart))
              .put("balanced_s", seconds(milestones.balanced, loadStart))
              .put("split_unavailable_ms_p50", percentile(splitGaps, 50))
              .put("split_unavailable_ms_p99", percentile(splitGaps, 99))
              .put("split_unavailable_ms_max", percentile(splitGaps, 100))
              .put("handover_unavailable_ms_p50", percentile(handoverGaps, 50))
              .put("handover_unavailable_ms_max", percentile(handoverGaps, 100))
              .put("ops_per_s_before_split", round(before))
              .put("ops_per_s_near_splits", round(nearSplits))
              .put("ops_per_s_away_from_splits", round(awayFromSplits))
              .put("ops_per_s_settled", round(settled))
              .put("ops_per_s_joining", round(joining))
              .put("ops_per_s_after_join", round(afterJoin))
              .put("join_first_replica_s", seconds(milestones.joinedReplica, joinAt))
              .put("join_leads_s", seconds(milestones.joinedLeads, joinAt))
              .put("join_share_s", seconds(share, joinAt))
              .put("join_handover_unavailable_ms_p50", percentile(joinHandoverGaps, 50))
              .put("join_handover_unavailable_ms_max", percentile(joinHandoverGaps, 100))
              .put("seal_ms_p50", percentile(splitLogs.sealMillis(), 50))
              .put("seal_ms_max", percentile(splitLogs.sealMillis(), 100))
              .put("commit_ms_p50", percentile(splitLogs.commitMillis(), 50))
              .put("commit_ms_max", percentile(splitLogs.commitMillis(), 100))
              .put("primary_open_ms_p50", percentile(splitLogs.primaryOpenMillis(), 50))
              .put("primary_open_ms_max", percentile(splitLogs.primaryOpenMillis(), 100))
              .put("local_split_ms_p50", percentile(splitLogs.localSplitMillis(), 50))
              .put("local_split_ms_max", percentile(splitLogs.localSplitMillis(), 100))
              .put("notes", notes));
      Path json = options.outDir().resolve("elastic.json");
      StringBuilder out = new StringBuilder();
      lines.forEach(line -> out.append(line).append('\n'));
      Files.writeString(json, out.toString(), StandardCharsets.UTF_8);
      Path chart = options.outDir().resolve("elastic.png");
      List<Double> joinMarks = new ArrayList<>(List.of(joinAt / 1e9));
      if (share >= 0) {
        joinMarks.add(share / 1e9);
      }
      LineChart.write(
          chart,
          "One region growing under a hot-range load, then a fourth server joining",
          List.of(
              new LineChart.Panel(
                  "regions (marks: splits)",
                  "regions",
                  Arrays.copyOf(regionsPerSecond, seconds),
                  splitSeconds),
              new LineChart.Panel(
                  "acknowledged ops/s (marks: " + JOINING + " joins, holds its share)",
                  "ops/s",
                  perSecond,
                  joinMarks)));
      System.out.println("results: " + json + ", chart: " + chart);
    }
  }

  /**
   * Mean ops/s over the seconds from {@code from} to {@code to} that are ({@code near}) or are not
   * within [1 s before, {@link #AFTER_SPLIT} after] one of {@code moments} (seconds).
   */
  private static double secondsNear(
      double[] perSecond, List<Double> moments, long from, long to, boolean near) {
    double total = 0;
    int count = 0;
    int first = (int) (from / 1_000_000_000L);
    int last = (int) Math.min(perSecond.length, to / 1_000_000_000L);
    for (int second = first; second < last; second++) {
      double at = second;
      boolean close =
          moments.stream()
              .anyMatch(moment -> at + 1 > moment - 1 && at < moment + AFTER_SPLIT.toSeconds());
      if (close == near) {
        total += perSecond[second];
        count++;
      }
    }
    return count == 0 ? 0 : total / count;
  }

  /**
   * Every region with its replication factor of members (no replica move half done), every server
   * of {@code servers} leading a region, the replicas in sync each holds within one of each other
   * (the balancer's band; a backup still catching up, as a new daughter's, does not count) and
   * leadership counts within two (a region busier than most weighs more than one).
   */
  private static boolean balanced(RegionMap map, List<String> servers) {
    if (map.size() == 0
        || !map.regions().stream().allMatch(r -> r.members().size() == REPLICATION)) {
      return false;
    }
    Map<String, Integer> replicas = new TreeMap<>();
    Map<String, Integer> leads = leads(map, servers);
    servers.forEach(server -> replicas.put(server, 0));
    for (RegionDescriptor region : map.regions()) {
      region.members().stream()
          .filter(member -> !region.joining().contains(member))
          .forEach(member -> replicas.merge(member, 1, Integer::sum));
    }
    return replicas.size() == servers.size()
        && leads.values().stream().allMatch(n -> n > 0)
        && spread(replicas) <= 1
        && spread(leads) <= 2;
  }

  private static int spread(Map<String, Integer> counts) {
    int most = counts.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    int least = counts.values().stream().mapToInt(Integer::intValue).min().orElse(0);
    return most - least;
  }

  private static Map<String, Integer> leads(RegionMap map, List<String> servers) {
    Map<String, Integer> leads = new TreeMap<>();
    servers.forEach(server -> leads.put(server, 0));
    map.regions().forEach(region -> leads.computeIfPresent(region.primary(), (s, n) -> n + 1));
    return leads;
  }

  private static Map<String, Integer> count(RegionMap map, boolean replicas) {
    Map<String, Integer> counts = new TreeMap<>();
    servers(SERVERS + 1).forEach(server -> counts.put(server, 0));
    for (RegionDescriptor region : map.regions()) {
      List<String> servers = replicas ? region.members() : List.of(region.primary());
      servers.forEach(server -> counts.merge(server, 1, Integer::sum));
    }
    return counts;
  }

  private static List<String> servers(int count) {
    List<String> servers = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      servers.add("s" + i);
    }
    return servers;
  }

  /** Every region open with its whole group, none joining. */
  private static boolean whole(RegionMap map) {
    return map.size() > 0
        && map.regions().stream()
            .allMatch(
                region ->
                    region.state() == RegionState.OPEN
                        && region.members().size() == REPLICATION
                        && region.joining().isEmpty());
  }

  /**
   * Waits until {@code condition} holds, running {@code track} at every look; false (and a line
   * saying what it waited for) if it did not within {@code timeout}.
   */
  private static boolean await(
      String what, Duration timeout, BooleanSupplier condition, Runnable track)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      track.run();
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() > deadline) {
        System.out.println("gave up waiting for " + what + " after " + timeout.toSeconds() + " s");
        return false;
      }
      Thread.sleep(MapWatch.PERIOD_MILLIS); // the map is sampled that often
    }
  }

  private static String percentiles(List<Long> values) {
    if (values.isEmpty()) {
      return "none";
    }
    return String.format(
        Locale.ROOT,
        "p50 %d, p99 %d, max %d (%d)",
        percentile(values, 50),
        percentile(values, 99),
        percentile(values, 100),
        values.size());
  }

  private static String at(long moment, long from) {
    return moment < 0 ? "not reached" : String.format(Locale.ROOT, "%.1f s", (moment - from) / 1e9);
  }

  private static String after(long moment, long from) {
    return moment < 0
        ? "not reached"
        : String.format(Locale.ROOT, "%.1f s after", (moment - from) / 1e9);
  }

  private static Object seconds(long moment, long from) {
    return moment < 0 ? null : round((moment - from) / 1e9);
  }

  private static long percentile(List<Long> values, int percentile) {
    if (values.isEmpty()) {
      return 0;
    }
    List<Long> sorted = values.stream().sorted().toList();
    int index = (int) Math.ceil(percentile / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }

  /** {@code millis} since the epoch as the cluster's logs print it (HH:mm:ss.SSS, local time). */
  private static String wallClock(long millis) {
    return java.time.LocalTime.ofInstant(
            java.time.Instant.ofEpochMilli(millis), java.time.ZoneId.systemDefault())
        .format(java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss.SSS"));
  }

  private static double round(double value) {
    return Math.round(value * 10) / 10.0;
  }
}
