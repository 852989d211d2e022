package io.kvs.core.cli;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code --name value} and {@code --name=value} options, plus positional arguments. Unknown options
 * are an error, so a typo never silently falls back to a default.
 */
public final class Flags {
  private final Map<String, String> values;
  private final List<String> positional;

  private Flags(Map<String, String> values, List<String> positional) {
    this.values = values;
    this.positional = positional;
  }

  /**
   * Parses {@code args}, accepting only options in {@code known} (names without dashes).
   *
   * @throws IllegalArgumentException for an unknown option or one without a value
   */
  public static Flags parse(String[] args, Set<String> known) {
    Map<String, String> values = new LinkedHashMap<>();
    List<String> positional = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) {
        positional.add(arg);
        continue;
      }
      String name = arg.substring(2);
      String value;
      int equals = name.indexOf('=');
      if (equals >= 0) {
        value = name.substring(equals + 1);
        name = name.substring(0, equals);
      } else if (i + 1 < args.length) {
        value = args[++i];
      } else {
        throw new IllegalArgumentException("option --" + name + " needs a value");
      }
      if (!known.contains(name)) {
        throw new IllegalArgumentException(
            "unknown option --" + name + " (known: --" + String.join(", --", known) + ")");
      }
      values.put(name, value);
    }
    return new Flags(values, Collections.unmodifiableList(positional));
  }

  public boolean has(String name) {
    return values.containsKey(name);
  }

  public String get(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  /**
   * @throws IllegalArgumentException if the option is missing
   */
  public String require(String name) {
    String value = values.get(name);
    if (value == null) {
      throw new IllegalArgumentException("option --" + name + " is required");
    }
    return value;
  }

  public int getInt(String name, int fallback) {
    String value = values.get(name);
    if (value == null) {
      return fallback;
    }
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("option --" + name + ": not a number: " + value, e);
    }
  }

  public long getLong(String name, long fallback) {
    String value = values.get(name);
    if (value == null) {
      return fallback;
    }
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("option --" + name + ": not a number: " + value, e);
    }
  }

  /**
   * An {@code on}/{@code off} switch.
   *
   * @throws IllegalArgumentException for any other value
   */
  public boolean getOnOff(String name, boolean fallback) {
    String value = values.get(name);
    if (value == null) {
      return fallback;
    }
    return switch (value) {
      case "on" -> true;
      case "off" -> false;
      default ->
          throw new IllegalArgumentException("option --" + name + ": on or off, not " + value);
    };
  }

  public List<String> positional() {
    return positional;
  }
}
