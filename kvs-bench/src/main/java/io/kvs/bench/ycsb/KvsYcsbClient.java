package io.kvs.bench.ycsb;

import io.kvs.client.CasResult;
import io.kvs.client.KvsClient;
import io.kvs.core.KeyValue;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * The YCSB binding of KVS: a {@link DB} over {@link KvsClient}, run by YCSB's client as {@code -db
 * io.kvs.bench.ycsb.KvsYcsbClient} ({@code ./kvs ycsb load|run <workload>}). How it reaches the
 * cluster is set by the {@code kvs.*} properties (see {@link ClientSettings}: {@code
 * kvs.zookeeper}, {@code kvs.local.dir}, {@code kvs.cluster}, {@code kvs.transport}, {@code
 * kvs.timeout.ms}); every instance of a JVM (YCSB makes one per thread) shares one client, closed
 * when the last instance is cleaned up.
 *
 * <p><b>Data model.</b> Record {@code key} of {@code table} is the KVS key {@code table + ":" +
 * key} in UTF-8 (e.g. {@code usertable:user6284781860667377211}), so tables never mix and a scan
 * stays inside its table, in YCSB key order. The value is the record's fields, encoded as {@link
 * FieldCodec} describes (a version byte, then length-prefixed name/value pairs).
 *
 * <p><b>Operations.</b> {@code read} reads the record and keeps the fields asked for; {@code scan}
 * reads up to {@code recordcount} records from {@code startkey} on, within the table; {@code
 * insert} writes the record whole; {@code update} reads the record, replaces the fields given and
 * writes it back -- with {@code kvs.update.atomic=true} as a compare-and-set over the record read
 * (read again from the refusal and merged again when another write came between, at most {@value
 * #ATOMIC_UPDATE_TRIES} times, so concurrent updates of one record lose no field and an update
 * racing a delete does not bring the record back), else as a plain put (concurrent updates of one
 * record may lose a field's update: the cost of the atomic one is a compare-and-set instead of a
 * put, measured in docs/BENCHMARKS.md) -- except that an update carrying every field of a record
 * (as many as YCSB's {@code fieldcount}, default 10; {@code writeallfields=true}) replaces the
 * record without reading it, one write instead of a read and a write, and so also writes a record
 * that was missing; {@code delete} deletes the key. A missing record is {@link Status#NOT_FOUND}
 * for read and update; any failure of the client (timeout, unavailable region, malformed value) is
 * {@link Status#ERROR} and is logged (the first 20 failures, then every 1,000th). {@code delete} of
 * a missing record is {@link Status#OK}: KVS deletes do not tell.
 */
public final class KvsYcsbClient extends DB {
  private static final Logger LOG = LoggerFactory.getLogger(KvsYcsbClient.class);
  private static final AtomicLong FAILURES = new AtomicLong();

  /** Compare-and-sets an atomic update makes at most before it fails as contended. */
  static final int ATOMIC_UPDATE_TRIES = 16;

  /** The property that makes updates atomic. */
  static final String ATOMIC_UPDATE = "kvs.update.atomic";

  private KvsClient client;

  /** YCSB's {@code fieldcount}: an update with this many fields replaces the record whole. */
  private int fieldCount;

  private boolean atomicUpdates;

  /** Made by YCSB's DB factory, one per client thread. */
  public KvsYcsbClient() {}

  @Override
  public void init() throws DBException {
    try {
      fieldCount = Integer.parseInt(getProperties().getProperty("fieldcount", "10").trim());
      atomicUpdates =
          Boolean.parseBoolean(getProperties().getProperty(ATOMIC_UPDATE, "false").trim());
      client = SharedClient.acquire(ClientSettings.from(getProperties()));
    } catch (IOException | RuntimeException e) {
      // A malformed fieldcount (NumberFormatException) lands here too.
      throw new DBException("cannot open the KVS client: " + e.getMessage(), e);
    }
  }

  @Override
  public void cleanup() {
    if (client != null) {
      SharedClient.release(client);
      client = null;
    }
  }

  @Override
  public Status read(
      String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      Optional<byte[]> record = client.get(key(table, key));
      if (record.isEmpty()) {
        return Status.NOT_FOUND;
      }
      putFields(FieldCodec.decode(record.get()), fields, result);
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("read", table, key, e);
    }
  }

  @Override
  public Status scan(
      String table,
      String startkey,
      int recordcount,
      Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    if (recordcount < 1) {
      return Status.OK;
    }
    try {
      byte[] end = (table + ";").getBytes(StandardCharsets.UTF_8); // ';' follows ':'
      for (KeyValue pair : client.scan(key(table, startkey), end, recordcount)) {
        HashMap<String, ByteIterator> record = new HashMap<>();
        putFields(FieldCodec.decode(pair.value()), fields, record);
        result.add(record);
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("scan", table, startkey, e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      byte[] rowKey = key(table, key);
      if (values.size() >= fieldCount) {
        // Every field is given: nothing of the stored record survives, so it is not read.
        Map<String, byte[]> fields = new HashMap<>();
        values.forEach((name, value) -> fields.put(name, value.toArray()));
        client.put(rowKey, FieldCodec.encode(fields));
        return Status.OK;
      }
      Optional<byte[]> record = client.get(rowKey);
      Map<String, byte[]> given = new HashMap<>();
      values.forEach((name, value) -> given.put(name, value.toArray()));
      for (int attempt = 1; ; attempt++) {
        if (record.isEmpty()) {
          return Status.NOT_FOUND;
        }
        Map<String, byte[]> fields = FieldCodec.decode(record.get());
        fields.putAll(given);
        byte[] merged = FieldCodec.encode(fields);
        if (!atomicUpdates) {
          client.put(rowKey, merged);
          return Status.OK;
        }
        CasResult swapped = client.compareAndSet(rowKey, record.get(), merged);
        if (swapped.isApplied()) {
          return Status.OK;
        }
        if (attempt == ATOMIC_UPDATE_TRIES) {
          throw new IllegalStateException(
              "the record changed under each of " + attempt + " compare-and-sets");
        }
        record = swapped.current(); // what came between: merged again
      }
    } catch (RuntimeException e) {
      return failed("update", table, key, e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      Map<String, byte[]> fields = new HashMap<>();
      values.forEach((name, value) -> fields.put(name, value.toArray()));
      client.put(key(table, key), FieldCodec.encode(fields));
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("insert", table, key, e);
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      client.delete(key(table, key));
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("delete", table, key, e);
    }
  }

  /** The KVS key of record {@code key} of {@code table}. */
  static byte[] key(String table, String key) {
    return (table + ":" + key).getBytes(StandardCharsets.UTF_8);
  }

  private static void putFields(
      Map<String, byte[]> stored, Set<String> wanted, Map<String, ByteIterator> result) {
    stored.forEach(
        (name, value) -> {
          if (wanted == null || wanted.contains(name)) {
            result.put(name, new ByteArrayByteIterator(value));
          }
        });
  }

  private static Status failed(String operation, String table, String key, RuntimeException e) {
    long failures = FAILURES.incrementAndGet();
    if (failures <= 20 || failures % 1000 == 0) {
      // The message only (a Throwable argument would print its stack trace).
      LOG.warn(
          "{} of {}:{} failed ({} failures so far): {}",
          operation,
          table,
          key,
          failures,
          e.toString());
    }
    return Status.ERROR;
  }
}
