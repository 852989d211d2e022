package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class InsertSequenceTest {
  @Test
  void acknowledgedAdvancesOnlyOverContiguousInserts() {
    InsertSequence sequence = new InsertSequence(10);
    long a = sequence.allocate();
    long b = sequence.allocate();
    long c = sequence.allocate();
    assertThat(new long[] {a, b, c}).containsExactly(10, 11, 12);
    sequence.acknowledge(b);
    sequence.acknowledge(c);
    assertThat(sequence.acknowledged()).isEqualTo(10);
    sequence.acknowledge(a);
    assertThat(sequence.acknowledged()).isEqualTo(13);
  }

  @Test
  void concurrentInsertsAreAllAcknowledged() throws InterruptedException {
    InsertSequence sequence = new InsertSequence(0);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Thread thread =
          new Thread(
              () -> {
                for (int i = 0; i < 50_000; i++) {
                  long number = sequence.allocate();
                  assertThat(number).isGreaterThanOrEqualTo(sequence.acknowledged());
                  sequence.acknowledge(number);
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(sequence.acknowledged()).isEqualTo(200_000);
    assertThat(sequence.allocated()).isEqualTo(200_000);
  }
}
