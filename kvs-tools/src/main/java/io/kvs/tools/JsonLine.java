package io.kvs.tools;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One JSON object written on one line (the "JSON lines" format every benchmark writes under {@code
 * target/bench/}). Fields keep their insertion order. Values may be strings, numbers, booleans,
 * null, nested {@link JsonLine}s or maps with string keys holding such values. Non-finite doubles
 * are written as null, since JSON has no representation for them.
 */
public final class JsonLine {
  private static final MathContext SIGNIFICANT_DIGITS = new MathContext(6);

  private final Map<String, Object> fields = new LinkedHashMap<>();

  /** Adds (or replaces) a field; returns this object for chaining. */
  public JsonLine put(String name, Object value) {
    Objects.requireNonNull(name, "name");
    if (value != null
        && !(value instanceof String
            || value instanceof Number
            || value instanceof Boolean
            || value instanceof JsonLine
            || value instanceof Map
            || value instanceof List)) {
      throw new IllegalArgumentException(
          "field " + name + " has unsupported type " + value.getClass().getName());
    }
    fields.put(name, value);
    return this;
  }

  /** The field's value, or null. */
  public Object get(String name) {
    return fields.get(name);
  }

  /** The object as one line of JSON, without a line terminator. */
  @Override
  public String toString() {
    StringBuilder out = new StringBuilder(256);
    appendObject(out, fields);
    return out.toString();
  }

  private static void appendObject(StringBuilder out, Map<?, ?> map) {
    out.append('{');
    boolean first = true;
    for (Map.Entry<?, ?> field : map.entrySet()) {
      if (!first) {
        out.append(',');
      }
      first = false;
      appendString(out, String.valueOf(field.getKey()));
      out.append(':');
      appendValue(out, field.getValue());
    }
    out.append('}');
  }

  private static void appendValue(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String text) {
      appendString(out, text);
    } else if (value instanceof Double || value instanceof Float) {
      double number = ((Number) value).doubleValue();
      if (Double.isFinite(number)) {
        // Six significant digits, plain notation: enough for any benchmark figure.
        out.append(
            number == Math.rint(number) && Math.abs(number) < 1e15
                ? Long.toString((long) number)
                : new BigDecimal(number)
                    .round(SIGNIFICANT_DIGITS)
                    .stripTrailingZeros()
                    .toPlainString());
      } else {
        out.append("null");
      }
    } else if (value instanceof Number || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof JsonLine nested) {
      appendObject(out, nested.fields);
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        appendValue(out, list.get(i));
      }
      out.append(']');
    } else {
      appendObject(out, (Map<?, ?>) value);
    }
  }

  private static void appendString(StringBuilder out, String text) {
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
