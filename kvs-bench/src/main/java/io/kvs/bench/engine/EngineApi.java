package io.kvs.bench.engine;

import java.util.Locale;

/**
 * How the benchmark drives the systems: from the JVM (KVS through its JNI binding, RocksDB through
 * RocksJava), or from C++ ({@code kvs_engine_bench}: the KVS engine's C++ API against Debian's
 * librocksdb), where neither engine pays a JNI crossing in the other's favour.
 */
public enum EngineApi {
  JVM("jvm"),
  NATIVE("native");

  private final String id;

  EngineApi(String id) {
    this.id = id;
  }

  /** The name used on the command line. */
  public String id() {
    return id;
  }

  /** Parses {@code jvm} or {@code native}, ignoring case. */
  public static EngineApi parse(String name) {
    String wanted = name.trim().toLowerCase(Locale.ROOT);
    for (EngineApi api : values()) {
      if (api.id.equals(wanted)) {
        return api;
      }
    }
    throw new IllegalArgumentException("unknown API '" + name + "'; known: jvm, native");
  }
}
