package io.kvs.bench.tail;

import io.kvs.bench.engine.Keys;
import io.kvs.bench.engine.KvMix;
import io.kvs.bench.engine.ZipfianGenerator;
import io.kvs.client.KvsClient;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * YCSB workload A over the {@link KvMix#SD} size mix: half reads, half updates of records drawn
 * Zipfian (YCSB's theta 0.99) from {@code records} loaded ones ({@link Keys}: hashed, so hot keys
 * land in every region); an update's value size is drawn from the mix. Not thread-safe: one per
 * issuing thread.
 */
final class RunA {
  /** The kinds of operation, as reported. */
  enum Op {
    READ,
    UPDATE
  }

  private final KvsClient client;
  private final ZipfianGenerator zipfian;
  private final SplittableRandom random;
  private final byte[][] values = new byte[KvMix.SizeClass.values().length][];

  RunA(KvsClient client, long records, double zetaN, long seed) {
    this.client = client;
    this.zipfian = new ZipfianGenerator(records, ZipfianGenerator.YCSB_THETA, zetaN);
    this.random = new SplittableRandom(seed);
    for (KvMix.SizeClass size : KvMix.SizeClass.values()) {
      byte[] value = new byte[size.valueBytes()];
      new SplittableRandom(seed ^ size.ordinal()).nextBytes(value);
      values[size.ordinal()] = value;
    }
  }

  /** The value of a write drawn from the SD mix. */
  byte[] value() {
    return values[KvMix.SD.draw(random).ordinal()];
  }

  /** Which operation comes next. */
  Op nextOp() {
    return random.nextBoolean() ? Op.READ : Op.UPDATE;
  }

  /** Issues {@code op} on a record drawn Zipfian. */
  CompletableFuture<?> issue(Op op) {
    byte[] key = Keys.of(zipfian.next(random));
    return op == Op.READ ? client.getAsync(key) : client.putAsync(key, value());
  }
}
