package io.kvs.bench.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.bench.history.HistoryRecorder.FailureClassifier;
import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class HistoryRecorderTest {
  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** A linearizable in-memory store: one lock around a map. */
  private static final class Store {
    private final Map<String, byte[]> map = new HashMap<>();

    synchronized void put(byte[] key, byte[] value) {
      map.put(new String(key, StandardCharsets.UTF_8), value.clone());
    }

    synchronized void delete(byte[] key) {
      map.remove(new String(key, StandardCharsets.UTF_8));
    }

    synchronized Optional<byte[]> get(byte[] key) {
      return Optional.ofNullable(map.get(new String(key, StandardCharsets.UTF_8)));
    }
  }

  @Test
  void concurrentClientsOfALinearizableStoreRecordALinearizableHistory() throws Exception {
    HistoryRecorder recorder = new HistoryRecorder(100_000);
    Store store = new Store();
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < 8; c++) {
      int client = c;
      threads.add(
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 1_000; i++) {
                    byte[] key = bytes("k" + (i % 5));
                    switch (i % 4) {
                      case 0, 1 -> {
                        byte[] value = bytes("c" + client + "-" + i);
                        recorder.put(
                            client,
                            key,
                            value,
                            () -> store.put(key, value),
                            FailureClassifier.ALWAYS_UNKNOWN);
                      }
                      case 2 -> recorder.get(client, key, () -> store.get(key));
                      default -> {
                        if (i % 40 == 3) {
                          recorder.delete(
                              client,
                              key,
                              () -> store.delete(key),
                              FailureClassifier.ALWAYS_UNKNOWN);
                        } else {
                          recorder.get(client, key, () -> store.get(key));
                        }
                      }
                    }
                  }
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
              }));
    }
    threads.forEach(Thread::start);
    for (Thread thread : threads) {
      thread.join();
    }
    History history = recorder.history();
    assertThat(history.size()).isEqualTo(8_000).isEqualTo(recorder.size());
    assertThat(history.operations()).allMatch(op -> op.outcome() == Outcome.OK);
    assertThat(history.operations()).allMatch(op -> op.completeNanos() >= op.invokeNanos());
    Verdict verdict = new LinearizabilityChecker().check(history);
    assertThat(verdict.isLinearizable()).as(verdict.describe()).isTrue();
  }

  @Test
  void aCompareAndSetIsRecordedAsAWriteWhenAppliedAndAsTheReadItWasWhenNot() {
    HistoryRecorder recorder = new HistoryRecorder();
    byte[] key = bytes("k");
    recorder.invokeCas(1, key, null, bytes("a")).ok();
    recorder.invokeCas(2, key, null, bytes("b")).notApplied(bytes("a"));
    Call unknown = recorder.invokeCas(2, key, bytes("a"), bytes("c"));
    unknown.unknown();
    List<Operation> ops = recorder.history().operations();
    assertThat(ops.get(0).kind()).isEqualTo(Operation.Kind.CAS);
    assertThat(ops.get(0).expected()).isNull();
    assertThat(ops.get(0).value()).isEqualTo(Bytes.of(bytes("a")));
    assertThat(ops.get(1).kind()).isEqualTo(Operation.Kind.GET);
    assertThat(ops.get(1).value()).isEqualTo(Bytes.of(bytes("a")));
    assertThat(ops.get(2).kind()).isEqualTo(Operation.Kind.CAS);
    assertThat(ops.get(2).outcome()).isEqualTo(Operation.Outcome.UNKNOWN);
    assertThat(ops.get(2).expected()).isEqualTo(Bytes.of(bytes("a")));
    assertThat(new LinearizabilityChecker().check(recorder.history()).isLinearizable()).isTrue();
    // A CAS that claims to have applied over a value the key no longer held is caught.
    recorder.invokeCas(3, key, bytes("a"), bytes("d")).ok();
    recorder.invokeCas(3, key, bytes("a"), bytes("e")).ok();
    assertThat(new LinearizabilityChecker().check(recorder.history()).isLinearizable()).isFalse();
  }

  @Test
  void aStoreThatDropsAnAcknowledgedWriteIsCaught() throws Exception {
    HistoryRecorder recorder = new HistoryRecorder();
    Store store = new Store();
    byte[] key = bytes("k");
    recorder.put(
        1, key, bytes("a"), () -> store.put(key, bytes("a")), FailureClassifier.ALWAYS_UNKNOWN);
    recorder.put(1, key, bytes("b"), () -> {}, FailureClassifier.ALWAYS_UNKNOWN); // acked, lost
    assertThat(recorder.get(2, key, () -> store.get(key)))
        .hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("a")));
    Verdict verdict = new LinearizabilityChecker().check(recorder.history());
    assertThat(verdict.result()).isEqualTo(Verdict.Result.NOT_LINEARIZABLE);
    assertThat(verdict.lostWrites())
        .singleElement()
        .satisfies(l -> assertThat(l.write().value()).isEqualTo(Bytes.utf8("b")));
  }

  @Test
  void failuresAreClassifiedAndRethrown() {
    HistoryRecorder recorder = new HistoryRecorder();
    FailureClassifier rejected =
        e -> e instanceof IllegalStateException ? Outcome.FAILED_NOT_APPLIED : Outcome.UNKNOWN;
    assertThatThrownBy(
            () ->
                recorder.put(
                    1,
                    bytes("k"),
                    bytes("a"),
                    () -> {
                      throw new IllegalStateException("rejected");
                    },
                    rejected))
        .hasMessage("rejected");
    assertThatThrownBy(
            () ->
                recorder.delete(
                    1,
                    bytes("k"),
                    () -> {
                      throw new IOException("connection lost");
                    },
                    rejected))
        .hasMessage("connection lost");
    assertThatThrownBy(
            () ->
                recorder.get(
                    1,
                    bytes("k"),
                    () -> {
                      throw new IOException("timeout");
                    }))
        .hasMessage("timeout");
    List<Operation> ops = recorder.history().operations();
    assertThat(ops).extracting(Operation::kind).containsExactly(Kind.PUT, Kind.DELETE, Kind.GET);
    assertThat(ops)
        .extracting(Operation::outcome)
        .containsExactly(Outcome.FAILED_NOT_APPLIED, Outcome.UNKNOWN, Outcome.UNKNOWN);
    assertThat(ops.get(0).value()).isEqualTo(Bytes.utf8("a"));
  }

  @Test
  void callsInFlightAreUnknownAndCompleteOnce() {
    AtomicLong clock = new AtomicLong(100);
    HistoryRecorder recorder = new HistoryRecorder(10, clock::incrementAndGet);
    Call put = recorder.invoke(1, Kind.PUT, bytes("k"), bytes("a"));
    Call get = recorder.invoke(2, Kind.GET, bytes("k"), null);
    List<Operation> inFlight = recorder.history().operations();
    assertThat(inFlight).allMatch(op -> op.outcome() == Outcome.UNKNOWN);
    assertThat(inFlight).allMatch(op -> op.completeNanos() == Long.MAX_VALUE);
    put.ok();
    get.okRead(null);
    assertThatThrownBy(put::ok)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already completed");
    assertThatThrownBy(get::ok).isInstanceOf(IllegalStateException.class);
    List<Operation> done = recorder.history().operations();
    assertThat(done.get(0))
        .isEqualTo(
            new Operation(0, 1, Kind.PUT, Bytes.utf8("k"), Bytes.utf8("a"), 101, 103, Outcome.OK));
    assertThat(done.get(1))
        .isEqualTo(new Operation(1, 2, Kind.GET, Bytes.utf8("k"), null, 102, 104, Outcome.OK));
  }

  @Test
  void aFullRecorderRefusesAndTheWrappedCallIsNotMade() throws Exception {
    HistoryRecorder recorder = new HistoryRecorder(2);
    Store store = new Store();
    byte[] key = bytes("k");
    recorder.put(
        1, key, bytes("a"), () -> store.put(key, bytes("a")), FailureClassifier.ALWAYS_UNKNOWN);
    recorder.get(1, key, () -> store.get(key));
    AtomicBoolean ran = new AtomicBoolean();
    assertThatThrownBy(
            () ->
                recorder.put(
                    1, key, bytes("b"), () -> ran.set(true), FailureClassifier.ALWAYS_UNKNOWN))
        .isInstanceOf(HistoryRecorder.HistoryFullException.class)
        .hasMessageContaining("at most 2 operations");
    assertThatThrownBy(() -> recorder.invoke(1, Kind.GET, key, null))
        .isInstanceOf(HistoryRecorder.HistoryFullException.class);
    assertThat(ran).isFalse();
    assertThat(recorder.size()).isEqualTo(2);
    assertThat(recorder.history().size()).isEqualTo(2);
  }

  @Test
  void keysAndValuesAreCopiedAtInvoke() {
    HistoryRecorder recorder = new HistoryRecorder();
    byte[] key = bytes("k");
    byte[] value = bytes("a");
    recorder.invoke(1, Kind.PUT, key, value).ok();
    key[0] = 'x';
    value[0] = 'x';
    Operation op = recorder.history().operations().get(0);
    assertThat(op.key()).isEqualTo(Bytes.utf8("k"));
    assertThat(op.value()).isEqualTo(Bytes.utf8("a"));
  }
}
