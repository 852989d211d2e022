package io.kvs.bench.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.client.KvsClient;
import io.kvs.core.KeyValue;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.tools.InProcessCluster;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.htrace.core.HTraceConfiguration;
import org.apache.htrace.core.Tracer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import site.ycsb.ByteIterator;
import site.ycsb.ClientThread;
import site.ycsb.DB;
import site.ycsb.DBFactory;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;
import site.ycsb.measurements.Measurements;
import site.ycsb.measurements.exporter.TextMeasurementsExporter;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB's own client machinery (CoreWorkload, DBFactory and its measuring DBWrapper, ClientThread,
 * Measurements) drives the binding against a real cluster in this JVM, as {@code site.ycsb.Client}
 * does in {@code ./kvs ycsb} but without its {@code System.exit}: load 500 records, run 1,000
 * operations of workload A with {@code dataintegrity=true}, then 200 of workload E (scans and
 * inserts). YCSB reports every operation's status and every read's verification through its
 * measurements, which the test reads back.
 */
class KvsYcsbClientTest {
  private static final String CLUSTER = "ycsb";
  private static final String TABLE = "usertable";
  private static final int THREADS = 4;
  private static final Duration DEADLINE = Duration.ofSeconds(40);

  /**
   * Split points inside YCSB's key space ({@code usertable:user<hashed number>}): the uniform split
   * of the first two key bytes would put every record in one region.
   */
  private static final List<byte[]> SPLITS =
      List.of(bytes("usertable:user3"), bytes("usertable:user5"), bytes("usertable:user7"));

  private static final Pattern COUNT =
      Pattern.compile("^\\[([A-Z-]+)\\], (Operations|Return=[A-Z_]+), (\\d+)$");

  @TempDir Path directory;
  private InProcessCluster cluster;
  private KvsClient client;
  private Tracer tracer;

  @BeforeEach
  void startCluster() throws Exception {
    cluster = InProcessCluster.start(directory, CLUSTER, 4, SPLITS);
    client =
        KvsClient.builder()
            .zookeeper(cluster.zookeeper())
            .cluster(CLUSTER)
            .operationTimeout(Duration.ofSeconds(20))
            .build();
    tracer = new Tracer.Builder("YCSB test").conf(HTraceConfiguration.fromMap(Map.of())).build();
  }

  @AfterEach
  void stopCluster() throws Exception {
    if (tracer != null) {
      tracer.close();
    }
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void workloadsLoadRunAndVerifyThroughYcsb() throws Exception {
    Properties properties = workload("a");
    properties.setProperty("recordcount", "500");
    properties.setProperty("operationcount", "1000");
    properties.setProperty("dataintegrity", "true");
    properties.setProperty("kvs.zookeeper", cluster.zookeeper());
    properties.setProperty("kvs.cluster", CLUSTER);
    properties.setProperty("kvs.timeout.ms", "20000");
    Measurements.setProperties(properties);

    // Load: 500 records, each in KVS under usertable:<key>, spread over every region.
    Map<String, Long> before = counts();
    assertThat(runPhase(properties, false, 500)).isEqualTo(500);
    assertThat(delta(before, counts()))
        .containsEntry("INSERT Return=OK", 500L)
        .containsOnlyKeys("INSERT Operations", "INSERT Return=OK", "CLEANUP Operations");
    List<KeyValue> stored = client.scan(bytes(TABLE + ":"), bytes(TABLE + ";"), 10_000);
    assertThat(stored).hasSize(500);
    assertThat(FieldCodec.decode(stored.get(0).value())).hasSize(10);
    assertThat(
            stored.stream()
                .map(pair -> client.regionMap().regionFor(pair.key()).map(RegionDescriptor::id))
                .distinct())
        .hasSize(4);

    // Run workload A: every operation OK, and every read verified against what YCSB wrote.
    before = counts();
    assertThat(runPhase(properties, true, 1000)).isEqualTo(1000);
    Map<String, Long> run = delta(before, counts());
    assertThat(failures(run)).isEmpty();
    long reads = run.getOrDefault("READ Return=OK", 0L);
    long updates = run.getOrDefault("UPDATE Return=OK", 0L);
    assertThat(reads).isPositive();
    assertThat(updates).isPositive();
    assertThat(reads + updates).isEqualTo(1000);
    assertThat(run).containsEntry("VERIFY Return=OK", reads);
    // YCSB verifies the fields a read returns; updates (of one field each) must keep the others.
    assertThat(client.scan(bytes(TABLE + ":"), bytes(TABLE + ";"), 10_000))
        .hasSize(500)
        .allSatisfy(
            pair ->
                assertThat(FieldCodec.decode(pair.value()).values())
                    .hasSize(10)
                    .allSatisfy(value -> assertThat(value).hasSize(100)));

    // Run workload E: scans of up to 100 records across regions, and inserts of new records.
    Properties scans = new Properties();
    scans.putAll(properties);
    scans.putAll(workload("e"));
    scans.setProperty("recordcount", "500");
    scans.setProperty("operationcount", "200");
    before = counts();
    assertThat(runPhase(scans, true, 200)).isEqualTo(200);
    Map<String, Long> scanRun = delta(before, counts());
    assertThat(failures(scanRun)).isEmpty();
    assertThat(scanRun.getOrDefault("SCAN Return=OK", 0L)).isPositive();
    long inserted = scanRun.getOrDefault("INSERT Return=OK", 0L);
    assertThat(scanRun.get("SCAN Return=OK") + inserted).isEqualTo(200);

    assertThat(SharedClient.users()).as("every DB cleaned up").isZero();
    checkDirectly(properties, 500 + (int) inserted);
  }

  @Test
  void atomicUpdatesOfOneRecordLoseNoField() throws Exception {
    Properties properties = new Properties();
    properties.setProperty("kvs.zookeeper", cluster.zookeeper());
    properties.setProperty("kvs.cluster", CLUSTER);
    properties.setProperty(KvsYcsbClient.ATOMIC_UPDATE, "true");
    int threads = 4;
    int each = 25;
    KvsYcsbClient first = new KvsYcsbClient();
    first.setProperties(properties);
    first.init();
    try {
      assertThat(first.insert(TABLE, "contended", Map.of("seed", new StringByteIterator("0"))))
          .isEqualTo(Status.OK);
      List<Thread> writers = new ArrayList<>();
      List<Status> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
      for (int t = 0; t < threads; t++) {
        int thread = t;
        writers.add(
            new Thread(
                () -> {
                  KvsYcsbClient db = new KvsYcsbClient();
                  db.setProperties(properties);
                  try {
                    db.init();
                    for (int i = 0; i < each; i++) {
                      statuses.add(
                          db.update(
                              TABLE,
                              "contended",
                              Map.of("f" + thread + "-" + i, new StringByteIterator("x"))));
                    }
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  } finally {
                    db.cleanup();
                  }
                }));
      }
      writers.forEach(Thread::start);
      for (Thread writer : writers) {
        writer.join();
      }
      assertThat(statuses).hasSize(threads * each).containsOnly(Status.OK);
      Map<String, ByteIterator> record = new HashMap<>();
      assertThat(first.read(TABLE, "contended", null, record)).isEqualTo(Status.OK);
      // Every field each update added is there: none was lost to another's write.
      assertThat(record).hasSize(1 + threads * each);
    } finally {
      first.cleanup();
    }
  }

  /** The binding's own answers: a whole-table scan, field subsets, missing records, deletes. */
  private void checkDirectly(Properties properties, int records) throws Exception {
    KvsYcsbClient db = new KvsYcsbClient();
    db.setProperties(properties);
    db.init();
    try {
      Vector<HashMap<String, ByteIterator>> all = new Vector<>();
      assertThat(db.scan(TABLE, "user", records + 10, null, all)).isEqualTo(Status.OK);
      assertThat(all).hasSize(records);
      List<KeyValue> firstTwo = client.scan(bytes(TABLE + ":"), bytes(TABLE + ";"), 2);
      String key = recordKey(firstTwo.get(0));
      Map<String, ByteIterator> two = new HashMap<>();
      assertThat(db.read(TABLE, key, Set.of("field1", "field7"), two)).isEqualTo(Status.OK);
      assertThat(two).containsOnlyKeys("field1", "field7");
      assertThat(db.delete(TABLE, key)).isEqualTo(Status.OK);
      assertThat(db.read(TABLE, key, null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
      assertThat(db.update(TABLE, key, Map.of())).isEqualTo(Status.NOT_FOUND);
      // An update of every field (fieldcount 10) replaces the record without reading it: the
      // deleted record is written again, with exactly those fields.
      Map<String, ByteIterator> whole = new HashMap<>();
      for (int i = 0; i < 10; i++) {
        whole.put("field" + i, new StringByteIterator("whole-" + i));
      }
      assertThat(db.update(TABLE, key, whole)).isEqualTo(Status.OK);
      Map<String, ByteIterator> readBack = new HashMap<>();
      assertThat(db.read(TABLE, key, null, readBack)).isEqualTo(Status.OK);
      assertThat(readBack).hasSize(10);
      assertThat(readBack.get("field3").toString()).isEqualTo("whole-3");
      String other = recordKey(firstTwo.get(1));
      assertThat(db.read(TABLE, other, null, new HashMap<>())).isEqualTo(Status.OK);
      assertThat(db.read("othertable", other, null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
    } finally {
      db.cleanup();
    }
    assertThat(SharedClient.users()).isZero();
  }

  /** The YCSB key of a stored pair: its KVS key without the table prefix. */
  private static String recordKey(KeyValue pair) {
    return new String(pair.key(), StandardCharsets.UTF_8).substring(TABLE.length() + 1);
  }

  /** Runs one phase as site.ycsb.Client does: one DB per thread, the operations split evenly. */
  private int runPhase(Properties properties, boolean transactions, int operations)
      throws Exception {
    CoreWorkload workload = new CoreWorkload();
    workload.init(properties);
    CountDownLatch done = new CountDownLatch(THREADS);
    List<ClientThread> clients = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int id = 0; id < THREADS; id++) {
      DB db = DBFactory.newDB(KvsYcsbClient.class.getName(), properties, tracer);
      int share = operations / THREADS + (id < operations % THREADS ? 1 : 0);
      ClientThread thread =
          new ClientThread(db, transactions, workload, properties, share, -1, done);
      thread.setThreadId(id);
      thread.setThreadCount(THREADS);
      clients.add(thread);
      threads.add(new Thread(thread, "ycsb-client-" + id));
    }
    threads.forEach(Thread::start);
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    for (Thread thread : threads) {
      thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      assertThat(thread.isAlive()).as(thread.getName() + " finished in time").isFalse();
    }
    workload.cleanup();
    return clients.stream().mapToInt(ClientThread::getOpsDone).sum();
  }

  /** YCSB's measurements so far: "OP Operations" and "OP Return=STATUS" counts. */
  private static Map<String, Long> counts() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    TextMeasurementsExporter exporter = new TextMeasurementsExporter(out);
    Measurements.getMeasurements().exportMeasurements(exporter);
    exporter.close();
    Map<String, Long> counts = new HashMap<>();
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      Matcher m = COUNT.matcher(line.trim());
      if (m.matches()) {
        counts.put(m.group(1) + " " + m.group(2), Long.parseLong(m.group(3)));
      }
    }
    return counts;
  }

  private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
    return after.entrySet().stream()
        .filter(e -> e.getValue() - before.getOrDefault(e.getKey(), 0L) != 0)
        .collect(
            Collectors.toMap(
                Map.Entry::getKey, e -> e.getValue() - before.getOrDefault(e.getKey(), 0L)));
  }

  /** Statuses other than OK, and the measurements of failed operations ("OP-FAILED"). */
  private static Map<String, Long> failures(Map<String, Long> counts) {
    return counts.entrySet().stream()
        .filter(
            e ->
                e.getKey().contains("Return=") && !e.getKey().endsWith("Return=OK")
                    || e.getKey().contains("-FAILED"))
        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
  }

  private static Properties workload(String name) throws Exception {
    Properties properties = new Properties();
    try (InputStream in = KvsYcsbClientTest.class.getResourceAsStream("/ycsb/workload" + name)) {
      assertThat(in).as("workload" + name + " on the class path").isNotNull();
      properties.load(in);
    }
    return properties;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
