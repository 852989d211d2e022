package io.kvs.bench.history;

import java.util.HashMap;
import java.util.Map;

/**
 * Parses the one-line, flat JSON objects {@link History} writes: string, integer and null fields
 * only. A parser of our own keeps the history format free of a JSON library dependency.
 */
final class FlatJson {
  private final String text;
  private int at;

  private FlatJson(String text) {
    this.text = text;
  }

  /** The operation one line describes. */
  static Operation operation(String line) {
    Map<String, Object> fields = new FlatJson(line).object();
    String value = (String) optional(fields, "value");
    return new Operation(
        number(fields, "id"),
        Math.toIntExact(number(fields, "client")),
        Operation.Kind.valueOf(string(fields, "kind")),
        Bytes.fromBase64(string(fields, "key")),
        value == null ? null : Bytes.fromBase64(value),
        number(fields, "invoke"),
        number(fields, "complete"),
        Operation.Outcome.valueOf(string(fields, "outcome")),
        fields.get("expected") instanceof String expected ? Bytes.fromBase64(expected) : null);
  }

  private static Object optional(Map<String, Object> fields, String name) {
    if (!fields.containsKey(name)) {
      throw new IllegalArgumentException("missing field " + name);
    }
    return fields.get(name);
  }

  private static String string(Map<String, Object> fields, String name) {
    if (optional(fields, name) instanceof String s) {
      return s;
    }
    throw new IllegalArgumentException("field " + name + " is not a string");
  }

  private static long number(Map<String, Object> fields, String name) {
    if (optional(fields, name) instanceof Long n) {
      return n;
    }
    throw new IllegalArgumentException("field " + name + " is not an integer");
  }

  private Map<String, Object> object() {
    Map<String, Object> fields = new HashMap<>();
    expect('{');
    if (peek() == '}') {
      at++;
    } else {
      while (true) {
        String name = string();
        expect(':');
        fields.put(name, value());
        char next = next();
        if (next == '}') {
          break;
        }
        if (next != ',') {
          throw error("expected , or }");
        }
      }
    }
    if (peek() != 0) {
      throw error("text after the object");
    }
    return fields;
  }

  private Object value() {
    char c = peek();
    if (c == '"') {
      return string();
    }
    if (text.startsWith("null", at)) {
      at += 4;
      return null;
    }
    int start = at;
    if (c == '-') {
      at++;
    }
    while (at < text.length() && Character.isDigit(text.charAt(at))) {
      at++;
    }
    if (at == start || (at == start + 1 && c == '-')) {
      throw error("expected a string, an integer or null");
    }
    return Long.parseLong(text.substring(start, at));
  }

  private String string() {
    expect('"');
    StringBuilder out = new StringBuilder();
    while (true) {
      if (at >= text.length()) {
        throw error("unterminated string");
      }
      char c = text.charAt(at++);
      if (c == '"') {
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char escaped = at < text.length() ? text.charAt(at++) : 0;
      switch (escaped) {
        case '"', '\\', '/' -> out.append(escaped);
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'u' -> {
          if (at + 4 > text.length()) {
            throw error("bad \\u escape");
          }
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw error("bad escape");
      }
    }
  }

  private void expect(char c) {
    if (next() != c) {
      throw error("expected " + c);
    }
  }

  /** The next non-blank character, consumed; 0 at the end. */
  private char next() {
    char c = peek();
    if (c != 0) {
      at++;
    }
    return c;
  }

  /** The next non-blank character, not consumed; 0 at the end. */
  private char peek() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
    return at < text.length() ? text.charAt(at) : 0;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException(what + " at column " + (at + 1));
  }
}
