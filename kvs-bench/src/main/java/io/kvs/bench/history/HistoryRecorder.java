package io.kvs.bench.history;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

/**
 * Records what clients did, for the {@link LinearizabilityChecker}. Thread-safe; an operation may
 * be invoked on one thread and completed on another (e.g. in a future's callback).
 *
 * <p>Either wrap each client call, which records both ends and classifies failures:
 *
 * <pre>{@code
 * recorder.put(client, key, value, () -> kvs.put(key, value), FailureClassifier.ALWAYS_UNKNOWN);
 * Optional<byte[]> got = recorder.get(client, key, () -> kvs.get(key));
 * }</pre>
 *
 * or call {@link #invoke} just before sending and one of {@link Call}'s completions once the answer
 * (or the failure) is in. {@link #history()} then gives the recorded operations; calls not yet
 * completed appear as {@link Outcome#UNKNOWN}.
 *
 * <p>Bounded: at most {@code maxOperations} operations are recorded. The next {@link #invoke}
 * throws {@link HistoryFullException}, and the wrappers throw it before running the client call: an
 * operation the history does not hold must never reach the store, or the checker would see effects
 * nobody recorded. Memory is about 200 bytes an operation plus its key and value bytes.
 *
 * <p>The hot path is one atomic increment, two copies (key, value) and one array store: slots are
 * indexed by the operation's id, so no lock is taken and no per-thread list needs merging.
 */
public final class HistoryRecorder {
  /** The bound {@link #HistoryRecorder()} uses: 1 Mi operations. */
  public static final int DEFAULT_MAX_OPERATIONS = 1 << 20;

  private static final int CHUNK_BITS = 12;
  private static final int CHUNK_SIZE = 1 << CHUNK_BITS;

  private final int maxOperations;
  private final LongSupplier clock;
  private final AtomicLong nextId = new AtomicLong();
  private final AtomicReferenceArray<AtomicReferenceArray<Call>> chunks;

  /** A recorder of at most {@link #DEFAULT_MAX_OPERATIONS} operations, timed by nanoTime. */
  public HistoryRecorder() {
    this(DEFAULT_MAX_OPERATIONS, System::nanoTime);
  }

  /** A recorder of at most {@code maxOperations} operations, timed by nanoTime. */
  public HistoryRecorder(int maxOperations) {
    this(maxOperations, System::nanoTime);
  }

  /**
   * A recorder of at most {@code maxOperations} operations, timed by {@code clock} (nanoseconds;
   * every client of one history must share it).
   */
  public HistoryRecorder(int maxOperations, LongSupplier clock) {
    if (maxOperations < 1) {
      throw new IllegalArgumentException("maxOperations " + maxOperations + " < 1");
    }
    this.maxOperations = maxOperations;
    this.clock = clock;
    this.chunks = new AtomicReferenceArray<>((maxOperations + CHUNK_SIZE - 1) >>> CHUNK_BITS);
  }

  /** The bound on the number of operations. */
  public int maxOperations() {
    return maxOperations;
  }

  /** The number of operations invoked so far (at most {@link #maxOperations()}). */
  public int size() {
    return (int) Math.min(nextId.get(), maxOperations);
  }

  /**
   * Records the invoke of an operation; call it just before the request is sent.
   *
   * @param value the value a PUT writes; null for GET and DELETE
   * @throws HistoryFullException if {@link #maxOperations()} operations were recorded already (the
   *     caller must then not send the request)
   */
  public Call invoke(int client, Kind kind, byte[] key, byte[] value) {
    if (kind == Kind.CAS) {
      throw new IllegalArgumentException("a CAS is invoked with its expected value: invokeCas");
    }
    return invoke(client, kind, key, value, null);
  }

  /**
   * Records the invoke of a CAS of {@code key} from {@code expected} (null: no value) to {@code
   * value}; complete it with {@link Call#ok()} (applied), {@link Call#notApplied} or a failure.
   */
  public Call invokeCas(int client, byte[] key, byte[] expected, byte[] value) {
    return invoke(client, Kind.CAS, key, value, expected);
  }

  private Call invoke(int client, Kind kind, byte[] key, byte[] value, byte[] expected) {
    if ((kind == Kind.PUT || kind == Kind.CAS) != (value != null)) {
      throw new IllegalArgumentException(kind + " with" + (value == null ? "out" : "") + " value");
    }
    long id = nextId.getAndIncrement();
    if (id >= maxOperations) {
      throw new HistoryFullException(maxOperations);
    }
    Bytes keyBytes = Bytes.of(key);
    Bytes valueBytes = value == null ? null : Bytes.of(value);
    Bytes expectedBytes = expected == null ? null : Bytes.of(expected);
    Call call =
        new Call(id, client, kind, keyBytes, valueBytes, expectedBytes, clock.getAsLong(), clock);
    chunk(id).set((int) (id & (CHUNK_SIZE - 1)), call);
    return call;
  }

  /** Records a PUT around {@code put}, classifying its failure with {@code classifier}. */
  public void put(int client, byte[] key, byte[] value, Action put, FailureClassifier classifier)
      throws Exception {
    write(invoke(client, Kind.PUT, key, value), put, classifier);
  }

  /** Records a DELETE around {@code delete}, classifying its failure with {@code classifier}. */
  public void delete(int client, byte[] key, Action delete, FailureClassifier classifier)
      throws Exception {
    write(invoke(client, Kind.DELETE, key, null), delete, classifier);
  }

  /**
   * Records a CAS of {@code key} from {@code expected} (null: no value) to {@code value} around
   * {@code cas}, classifying its failure with {@code classifier}; returns what it decided.
   */
  public Decided compareAndSet(
      int client,
      byte[] key,
      byte[] expected,
      byte[] value,
      Conditional cas,
      FailureClassifier classifier)
      throws Exception {
    Call call = invokeCas(client, key, expected, value);
    Decided[] decided = new Decided[1];
    run(call, () -> decided[0] = cas.run(), classifier);
    if (decided[0].applied()) {
      call.ok();
    } else {
      call.notApplied(decided[0].current());
    }
    return decided[0];
  }

  /** Records a GET around {@code get}; a failed GET carries no information and is kept as such. */
  public Optional<byte[]> get(int client, byte[] key, Read get) throws Exception {
    Call call = invoke(client, Kind.GET, key, null);
    Optional<byte[]> result;
    try {
      result = get.run();
    } catch (Throwable t) {
      call.unknown();
      throw t;
    }
    call.okRead(result.orElse(null));
    return result;
  }

  private static void write(Call call, Action action, FailureClassifier classifier)
      throws Exception {
    run(call, action, classifier);
    call.ok();
  }

  /**
   * Runs a write's {@code action}; a failure completes {@code call} as classified, and is thrown.
   */
  private static void run(Call call, Action action, FailureClassifier classifier) throws Exception {
    try {
      action.run();
    } catch (Exception e) {
      if (classifier.classify(e) == Outcome.FAILED_NOT_APPLIED) {
        call.failedNotApplied();
      } else {
        call.unknown();
      }
      throw e;
    } catch (Throwable t) {
      call.unknown();
      throw t;
    }
  }

  /**
   * The operations recorded so far. Safe at any time; calls still in flight appear as {@link
   * Outcome#UNKNOWN} with completion time {@link Long#MAX_VALUE}, so take it after the clients have
   * stopped to get their outcomes.
   */
  public History history() {
    int count = size();
    List<Operation> operations = new ArrayList<>(count);
    for (int id = 0; id < count; id++) {
      Call call = chunk(id).get(id & (CHUNK_SIZE - 1));
      // Null: the id was taken but invoke() had not stored the call yet, so nothing was sent.
      if (call != null) {
        operations.add(call.operation());
      }
    }
    return new History(operations);
  }

  private AtomicReferenceArray<Call> chunk(long id) {
    int index = (int) (id >>> CHUNK_BITS);
    AtomicReferenceArray<Call> chunk = chunks.get(index);
    if (chunk == null) {
      chunks.compareAndSet(index, null, new AtomicReferenceArray<>(CHUNK_SIZE));
      chunk = chunks.get(index);
    }
    return chunk;
  }

  /** A client call that may fail with any exception. */
  @FunctionalInterface
  public interface Action {
    /** Performs the write. */
    void run() throws Exception;
  }

  /** What a CAS decided: applied, or not and the key's value then ({@code current}, null: none). */
  public record Decided(boolean applied, byte[] current) {}

  /** A client compare-and-set. */
  @FunctionalInterface
  public interface Conditional {
    /** Performs it. */
    Decided run() throws Exception;
  }

  /** A client read: the value, or empty when the key is absent. */
  @FunctionalInterface
  public interface Read {
    /** Performs the read. */
    Optional<byte[]> run() throws Exception;
  }

  /** Decides what a write's exception means. Must be conservative: when in doubt, UNKNOWN. */
  @FunctionalInterface
  public interface FailureClassifier {
    /** Every failure may or may not have taken effect. */
    FailureClassifier ALWAYS_UNKNOWN = e -> Outcome.UNKNOWN;

    /**
     * {@link Outcome#FAILED_NOT_APPLIED} only if {@code e} guarantees the write did not and will
     * not take effect; {@link Outcome#UNKNOWN} otherwise.
     */
    Outcome classify(Exception e);
  }

  /** Thrown when a recorder already holds its maximum number of operations. */
  public static final class HistoryFullException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    HistoryFullException(int maxOperations) {
      super(
          "history recorder is full: it records at most "
              + maxOperations
              + " operations; the operation was not recorded and must not be sent (record fewer"
              + " operations or create the recorder with a larger bound)");
    }
  }
}
