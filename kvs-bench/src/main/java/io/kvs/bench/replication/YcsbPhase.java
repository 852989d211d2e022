package io.kvs.bench.replication;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One YCSB phase (load, or a run of a workload) as a process of the real YCSB client ({@code
 * site.ycsb.Client} with the KVS binding) against a local cluster, and what its summary says:
 * throughput, and per operation type the count, failures and latency percentiles.
 */
final class YcsbPhase {
  /** Per operation type (INSERT, READ, UPDATE, ...): count, failures, percentiles in us. */
  record Operation(long count, long failures, double p50, double p99, double p999) {}

  record Result(double opsPerSec, double seconds, Map<String, Operation> operations) {
    long writes() {
      long writes = 0;
      for (Map.Entry<String, Operation> entry : operations.entrySet()) {
        if (entry.getKey().equals("INSERT") || entry.getKey().equals("UPDATE")) {
          writes += entry.getValue().count();
        }
      }
      return writes;
    }

    long operationCount() {
      long count = 0;
      for (Map.Entry<String, Operation> entry : operations.entrySet()) {
        if (!entry.getKey().equals("CLEANUP")) {
          count += entry.getValue().count();
        }
      }
      return count;
    }
  }

  private static final Pattern LINE = Pattern.compile("^\\[([A-Z-]+)\\], ([^,]+), (.+)$");

  private YcsbPhase() {}

  /**
   * Runs YCSB: {@code load} inserts the records, otherwise runs the workload's operations.
   *
   * @param properties YCSB and binding properties ({@code -p name=value} each)
   * @param log where the client's output goes
   */
  static Result run(
      boolean load, Path ycsbLib, Map<String, String> properties, int threads, Path log)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    if (Runtime.version().feature() >= 22) {
      command.add("--enable-native-access=ALL-UNNAMED");
    }
    command.add("-Dkvs.log.level=WARN");
    command.add("-cp");
    command.add(System.getProperty("java.class.path") + ":" + ycsbLib.resolve("*"));
    command.add("site.ycsb.Client");
    command.add(load ? "-load" : "-t");
    command.add("-db");
    command.add("io.kvs.bench.ycsb.KvsYcsbClient");
    command.add("-threads");
    command.add(Integer.toString(threads));
    for (Map.Entry<String, String> property : properties.entrySet()) {
      command.add("-p");
      command.add(property.getKey() + "=" + property.getValue());
    }
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(2, TimeUnit.HOURS)) {
      process.destroyForcibly();
      throw new IOException("YCSB did not finish; see " + log);
    }
    return parse(Files.readAllLines(log), log);
  }

  static Result parse(List<String> lines, Path log) throws IOException {
    double opsPerSec = Double.NaN;
    double seconds = Double.NaN;
    Map<String, Map<String, String>> values = new LinkedHashMap<>();
    for (String line : lines) {
      Matcher matcher = LINE.matcher(line.trim());
      if (!matcher.matches()) {
        continue;
      }
      String section = matcher.group(1);
      String name = matcher.group(2).trim();
      String value = matcher.group(3).trim();
      if (section.equals("OVERALL")) {
        if (name.startsWith("Throughput")) {
          opsPerSec = Double.parseDouble(value);
        } else if (name.startsWith("RunTime")) {
          seconds = Double.parseDouble(value) / 1000;
        }
        continue;
      }
      values.computeIfAbsent(section, s -> new LinkedHashMap<>()).merge(name, value, (a, b) -> a);
    }
    if (Double.isNaN(opsPerSec)) {
      throw new IOException("YCSB printed no summary; see " + log);
    }
    Map<String, Operation> operations = new LinkedHashMap<>();
    values.forEach(
        (section, fields) -> {
          if (section.startsWith("VERIFY") || !fields.containsKey("Operations")) {
            return;
          }
          long failures = 0;
          for (Map.Entry<String, String> field : fields.entrySet()) {
            if (field.getKey().startsWith("Return=") && !field.getKey().equals("Return=OK")) {
              failures += Long.parseLong(field.getValue());
            }
          }
          operations.put(
              section,
              new Operation(
                  Long.parseLong(fields.get("Operations")),
                  failures,
                  percentile(fields, "50th"),
                  percentile(fields, "99th"),
                  percentile(fields, "99.9")));
        });
    return new Result(opsPerSec, seconds, operations);
  }

  private static double percentile(Map<String, String> fields, String prefix) {
    String value = fields.get(prefix + "PercentileLatency(us)");
    return value == null ? Double.NaN : Double.parseDouble(value);
  }
}
