package io.kvs.bench.history;

import io.kvs.tools.JsonLine;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * An immutable history: the operations of every client, ordered by id. It saves itself as JSON
 * lines (one operation a line, keys and values in base64) so a failing run's history can be kept
 * under {@code target/} and checked again offline:
 *
 * <pre>{"id":7,"client":2,"kind":"PUT","key":"az0x","value":"YzItMw==","invoke":1200,
 * "complete":1900,"outcome":"OK"}</pre>
 *
 * (on one line). A GET's value is its result (null: absent); a DELETE's is always null.
 */
public final class History {
  private final List<Operation> operations;

  /**
   * A history of {@code operations}.
   *
   * @throws IllegalArgumentException if two operations share an id
   */
  public History(Collection<Operation> operations) {
    List<Operation> sorted = new ArrayList<>(operations);
    sorted.sort(Comparator.comparingLong(Operation::id));
    for (int i = 1; i < sorted.size(); i++) {
      if (sorted.get(i).id() == sorted.get(i - 1).id()) {
        throw new IllegalArgumentException("two operations have id " + sorted.get(i).id());
      }
    }
    this.operations = List.copyOf(sorted);
  }

  /** The operations, ordered by id. */
  public List<Operation> operations() {
    return operations;
  }

  /** The number of operations. */
  public int size() {
    return operations.size();
  }

  /** The distinct keys. */
  public Set<Bytes> keys() {
    Set<Bytes> keys = new HashSet<>();
    for (Operation op : operations) {
      keys.add(op.key());
    }
    return keys;
  }

  /** The earliest invoke time, 0 for an empty history: explanations print times since then. */
  public long originNanos() {
    long origin = Long.MAX_VALUE;
    for (Operation op : operations) {
      origin = Math.min(origin, op.invokeNanos());
    }
    return operations.isEmpty() ? 0 : origin;
  }

  /** Writes the history to {@code file} as JSON lines, creating its parent directories. */
  public void writeJsonLines(Path file) throws IOException {
    if (file.toAbsolutePath().getParent() != null) {
      Files.createDirectories(file.toAbsolutePath().getParent());
    }
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      writeJsonLines(out);
    }
  }

  /** Writes the history to {@code out} as JSON lines; does not close it. */
  public void writeJsonLines(Writer out) throws IOException {
    Writer buffered = out instanceof BufferedWriter ? out : new BufferedWriter(out);
    for (Operation op : operations) {
      JsonLine line =
          new JsonLine()
              .put("id", op.id())
              .put("client", op.client())
              .put("kind", op.kind().name())
              .put("key", op.key().toBase64())
              .put("value", op.value() == null ? null : op.value().toBase64())
              .put("invoke", op.invokeNanos())
              .put("complete", op.completeNanos())
              .put("outcome", op.outcome().name());
      if (op.expected() != null) {
        line.put("expected", op.expected().toBase64());
      }
      buffered.write(line.toString());
      buffered.write('\n');
    }
    buffered.flush();
  }

  /** Reads a history written by {@link #writeJsonLines(Path)}. */
  public static History readJsonLines(Path file) throws IOException {
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return readJsonLines(in);
    }
  }

  /**
   * Reads a history written by {@link #writeJsonLines(Writer)}; blank lines are skipped.
   *
   * @throws IllegalArgumentException naming the line if one is not a valid operation
   */
  public static History readJsonLines(Reader in) throws IOException {
    BufferedReader lines = in instanceof BufferedReader b ? b : new BufferedReader(in);
    List<Operation> operations = new ArrayList<>();
    String line;
    int number = 0;
    try {
      while ((line = lines.readLine()) != null) {
        number++;
        if (!line.isBlank()) {
          operations.add(FlatJson.operation(line));
        }
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("line " + number + ": " + e.getMessage(), e);
    }
    return new History(operations);
  }
}
