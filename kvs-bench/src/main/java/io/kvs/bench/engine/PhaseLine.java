package io.kvs.bench.engine;

import io.kvs.tools.Latencies;
import java.util.HashMap;
import java.util.Map;

/**
 * One phase read back from its JSON line: a line the native benchmark ({@code kvs_engine_bench})
 * printed, or one of {@code engine.json} (either kind: the JVM's lines have the same fields, {@link
 * PhaseResult#toJson()}): the fields the reports show, and the line itself.
 *
 * @param round the round of a repeated run ({@code "round"}), 0 if the line has none
 * @param json the line as read
 */
public record PhaseLine(
    int round,
    String system,
    KvMix mix,
    Workload workload,
    boolean truncated,
    double opsPerSec,
    double cpuMicrosPerOp,
    double ioAmplification,
    double spaceAmplification,
    Latencies.Summary latency,
    String json)
    implements PhaseRow {

  /**
   * Parses one line of the tool's output.
   *
   * @throws IllegalArgumentException if it is not the tool's JSON object
   */
  public static PhaseLine parse(String line) {
    Map<String, String> fields = TopLevel.fields(line);
    return new PhaseLine(
        fields.containsKey("round") ? (int) number(fields, "round") : 0,
        text(fields, "system"),
        KvMix.parse(text(fields, "mix")),
        Workload.parse(text(fields, "workload")),
        "true".equals(fields.get("truncated")),
        number(fields, "ops_per_sec"),
        number(fields, "cpu_us_per_op"),
        number(fields, "io_amplification"),
        number(fields, "space_amplification"),
        new Latencies.Summary(
            (long) number(fields, "operations"),
            number(fields, "p50_us"),
            number(fields, "p99_us"),
            number(fields, "p999_us"),
            number(fields, "max_us")),
        line);
  }

  private static String text(Map<String, String> fields, String name) {
    String value = required(fields, name);
    if (value.length() < 2 || value.charAt(0) != '"' || value.charAt(value.length() - 1) != '"') {
      throw new IllegalArgumentException("field " + name + " is not a string: " + value);
    }
    return value.substring(1, value.length() - 1);
  }

  private static double number(Map<String, String> fields, String name) {
    String value = required(fields, name);
    if (value.equals("null")) {
      return Double.NaN; // the tool writes an undefined ratio (no operations) as null
    }
    try {
      return Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("field " + name + " is not a number: " + value, e);
    }
  }

  private static String required(Map<String, String> fields, String name) {
    String value = fields.get(name);
    if (value == null) {
      throw new IllegalArgumentException("missing field " + name);
    }
    return value;
  }

  /**
   * The top-level members of one JSON object, each as its raw text (strings keep their quotes;
   * nested objects and arrays are skipped as a whole). The tool writes no escapes in its strings.
   */
  static final class TopLevel {
    private TopLevel() {}

    static Map<String, String> fields(String line) {
      String text = line.strip();
      if (text.length() < 2 || text.charAt(0) != '{' || text.charAt(text.length() - 1) != '}') {
        throw new IllegalArgumentException("not a JSON object: " + abbreviated(text));
      }
      Map<String, String> fields = new HashMap<>();
      int at = 1;
      int end = text.length() - 1;
      while (at < end) {
        if (text.charAt(at) != '"') {
          throw new IllegalArgumentException("expected a member name at " + at);
        }
        int nameEnd = text.indexOf('"', at + 1);
        if (nameEnd < 0 || nameEnd + 1 >= end || text.charAt(nameEnd + 1) != ':') {
          throw new IllegalArgumentException("malformed member at " + at);
        }
        String name = text.substring(at + 1, nameEnd);
        int valueStart = nameEnd + 2;
        int valueEnd = valueEnd(text, valueStart, end);
        fields.put(name, text.substring(valueStart, valueEnd));
        at = valueEnd < end && text.charAt(valueEnd) == ',' ? valueEnd + 1 : valueEnd;
      }
      return fields;
    }

    /** Where the value starting at {@code start} ends: the next top-level comma, or the end. */
    private static int valueEnd(String text, int start, int end) {
      int depth = 0;
      boolean inString = false;
      for (int i = start; i < end; i++) {
        char c = text.charAt(i);
        if (inString) {
          inString = c != '"';
        } else if (c == '"') {
          inString = true;
        } else if (c == '{' || c == '[') {
          depth++;
        } else if (c == '}' || c == ']') {
          depth--;
        } else if (c == ',' && depth == 0) {
          return i;
        }
      }
      if (depth != 0 || inString) {
        throw new IllegalArgumentException("unbalanced value at " + start);
      }
      return end;
    }

    private static String abbreviated(String text) {
      return text.length() <= 80 ? text : text.substring(0, 80) + "...";
    }
  }
}
