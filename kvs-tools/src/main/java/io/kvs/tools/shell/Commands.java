package io.kvs.tools.shell;

import io.kvs.client.BatchResult;
import io.kvs.client.CasResult;
import io.kvs.client.KvsClient;
import io.kvs.client.Mutation;
import io.kvs.core.KeyValue;
import io.kvs.core.KvsException;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionMap;
import io.kvs.tools.admin.AdminCommands;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The shell's commands, run against one client: each line in, its answer out (results to {@code
 * out}, {@code error: ...} lines to {@code err}). A failed command never ends the session.
 */
final class Commands {
  /** How a line ended. */
  enum Outcome {
    OK,
    FAILED,
    QUIT
  }

  /** The scan limit when none is given. */
  static final int DEFAULT_SCAN_LIMIT = 20;

  static final String HELP =
      String.join(
          "\n",
          "commands (keys and values are UTF-8 text; \\xNN is any byte, \"a b\" keeps blanks):",
          "  put <key> <value>                store a value",
          "  get <key>                        read a value",
          "  delete <key>                     delete a key",
          "  mget <key>...                    read several keys at once",
          "  cas <key> <expected> <value>     store a value if the key holds the one expected"
              + " (- expects none), atomically",
          "  delif <key> <expected>           delete the key if it holds the value expected",
          "  incr <key> [<delta>]             add delta (1 unless given) to the key's 8-byte"
              + " counter; prints the sum",
          "  scan [<from> [<to> [<limit>]]]   pairs in [from, to) in key order; - for unbounded;"
              + " limit "
              + DEFAULT_SCAN_LIMIT
              + " unless given",
          "  rscan [<from> [<to> [<limit>]]]  the same in descending key order, from the end down",
          "  mput <key> <value>...            store several pairs (grouped by region); prints"
              + " how many applied",
          "  atomic put <k> <v> | del <k> ... apply writes to one region's keys all or none",
          "  regions                          the region map: range, primary, backups, epoch,"
              + " state",
          "  servers                          the servers in the region map and what they hold",
          "  admin <command> ...              an admin command (admin help lists them): move a"
              + " primary, decommission a server, a region's stats",
          "  help                             this list",
          "  quit                             leave (also exit, or end of input)");

  /** Opens an admin session on first use (the shell's cluster). */
  interface AdminSession {
    AdminCommands open(PrintWriter out) throws Exception;
  }

  private final KvsClient client;
  private final PrintWriter out;
  private final PrintWriter err;
  private final AdminSession adminSession;
  private AdminCommands admin;

  Commands(KvsClient client, PrintWriter out, PrintWriter err, AdminSession adminSession) {
    this.client = client;
    this.out = out;
    this.err = err;
    this.adminSession = adminSession;
  }

  /** Runs one line: a command, a blank line or a {@code #} comment. */
  Outcome execute(String line) {
    String trimmed = line.strip();
    if (trimmed.isEmpty() || trimmed.startsWith("#")) {
      return Outcome.OK;
    }
    try {
      return run(Text.words(trimmed));
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  /** Runs one command given as words (the one-shot {@code -- put a 1} form). */
  Outcome execute(List<byte[]> words) {
    try {
      return words.isEmpty() ? Outcome.OK : run(words);
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  private Outcome run(List<byte[]> words) {
    String command = new String(words.get(0), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    List<byte[]> args = words.subList(1, words.size());
    try {
      switch (command) {
        case "put" -> {
          arity(args, 2, 2, "put <key> <value>");
          client.put(args.get(0), args.get(1));
          out.println("OK");
        }
        case "get" -> {
          arity(args, 1, 1, "get <key>");
          out.println(client.get(args.get(0)).map(Text::format).orElse("(not found)"));
        }
        case "delete", "del" -> {
          arity(args, 1, 1, "delete <key>");
          client.delete(args.get(0));
          out.println("OK");
        }
        case "mget" -> {
          arity(args, 1, Integer.MAX_VALUE, "mget <key>...");
          List<Optional<byte[]>> values = client.multiGet(args);
          for (int i = 0; i < args.size(); i++) {
            out.println(
                Text.format(args.get(i))
                    + " "
                    + values.get(i).map(Text::format).orElse("(not found)"));
          }
        }
        case "cas" -> {
          arity(args, 3, 3, "cas <key> <expected> <value> (- expects no value)");
          boolean none = new String(args.get(1), StandardCharsets.UTF_8).equals("-");
          printConditional(
              client.compareAndSet(args.get(0), none ? null : args.get(1), args.get(2)));
        }
        case "delif" -> {
          arity(args, 2, 2, "delif <key> <expected>");
          printConditional(client.deleteIfEquals(args.get(0), args.get(1)));
        }
        case "incr" -> {
          arity(args, 1, 2, "incr <key> [<delta>]");
          long delta = args.size() == 2 ? delta(args.get(1)) : 1;
          out.println(client.increment(args.get(0), delta));
        }
        case "scan" -> scan(args, false);
        case "rscan" -> scan(args, true);
        case "mput" -> {
          if (args.isEmpty() || args.size() % 2 != 0) {
            throw new IllegalArgumentException("usage: mput <key> <value>...");
          }
          List<Mutation> mutations = new ArrayList<>();
          for (int i = 0; i < args.size(); i += 2) {
            mutations.add(Mutation.put(args.get(i), args.get(i + 1)));
          }
          BatchResult result = client.writeAll(mutations);
          if (!result.allApplied()) {
            String why = "";
            for (int i = 0; i < result.size() && why.isEmpty(); i++) {
              why = result.error(i).map(Throwable::getMessage).orElse("");
            }
            throw new IllegalStateException(
                result.count(BatchResult.Outcome.APPLIED)
                    + " of "
                    + result.size()
                    + " applied, "
                    + result.count(BatchResult.Outcome.NOT_APPLIED)
                    + " not applied, "
                    + result.count(BatchResult.Outcome.UNKNOWN)
                    + " unknown: "
                    + why);
          }
          out.println("OK (" + result.size() + (result.size() == 1 ? " pair)" : " pairs)"));
        }
        case "atomic" -> atomic(args);
        case "regions" -> {
          arity(args, 0, 0, "regions");
          regions(client.regionMap());
        }
        case "servers" -> {
          arity(args, 0, 0, "servers");
          servers(client.regionMap());
        }
        case "admin" -> admin(args);
        case "help", "?" -> out.println(HELP);
        case "quit", "exit" -> {
          return Outcome.QUIT;
        }
        default -> {
          return fail("unknown command '" + command + "' (help lists the commands)");
        }
      }
    } finally {
      out.flush();
    }
    return Outcome.OK;
  }

  private void printConditional(CasResult result) {
    out.println(
        result.isApplied()
            ? "OK"
            : "(not applied: " + result.current().map(Text::format).orElse("no value") + ")");
  }

  private static long delta(byte[] word) {
    String text = new String(word, StandardCharsets.UTF_8);
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("the delta must be a whole number, not " + text);
    }
  }

  private void admin(List<byte[]> args) {
    List<String> words =
        args.stream().map(word -> new String(word, StandardCharsets.UTF_8)).toList();
    try {
      if (admin == null) {
        admin = adminSession.open(out);
      }
      admin.run(words.isEmpty() ? List.of("help") : words);
    } catch (AdminCommands.AdminException e) {
      throw new IllegalArgumentException(e.getMessage());
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e.toString(), e);
    }
  }

  private void atomic(List<byte[]> args) {
    String usage = "atomic put <key> <value> | del <key> ...";
    List<Mutation> mutations = new ArrayList<>();
    for (int i = 0; i < args.size(); ) {
      String op = new String(args.get(i), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
      if (op.equals("put") && i + 2 < args.size()) {
        mutations.add(Mutation.put(args.get(i + 1), args.get(i + 2)));
        i += 3;
      } else if ((op.equals("del") || op.equals("delete")) && i + 1 < args.size()) {
        mutations.add(Mutation.delete(args.get(i + 1)));
        i += 2;
      } else {
        throw new IllegalArgumentException("usage: " + usage);
      }
    }
    if (mutations.isEmpty()) {
      throw new IllegalArgumentException("usage: " + usage);
    }
    client.writeAtomically(mutations);
    out.println("OK");
  }

  private void scan(List<byte[]> args, boolean reverse) {
    String usage = (reverse ? "rscan" : "scan") + " [<from> [<to> [<limit>]]]";
    arity(args, 0, 3, usage);
    byte[] from = args.size() > 0 ? bound(args.get(0)) : new byte[0];
    byte[] to = args.size() > 1 ? bound(args.get(1)) : new byte[0];
    int limit = DEFAULT_SCAN_LIMIT;
    if (args.size() > 2) {
      String text = new String(args.get(2), StandardCharsets.UTF_8);
      try {
        limit = Integer.parseInt(text);
      } catch (NumberFormatException e) {
        limit = 0;
      }
      if (limit < 1) {
        throw new IllegalArgumentException("the scan limit must be a positive number, not " + text);
      }
    }
    List<KeyValue> pairs =
        reverse ? client.reverseScan(from, to, limit) : client.scan(from, to, limit);
    for (KeyValue pair : pairs) {
      out.println(Text.format(pair.key()) + " " + Text.format(pair.value()));
    }
    out.println(
        "("
            + pairs.size()
            + (pairs.size() == 1 ? " pair" : " pairs")
            + (pairs.size() == limit ? ", limit reached" : "")
            + ")");
  }

  /** A scan bound: {@code -} (or empty) is unbounded. */
  private static byte[] bound(byte[] word) {
    return word.length == 1 && word[0] == '-' ? new byte[0] : word;
  }

  private void regions(RegionMap map) {
    out.printf(
        "%-6s %-28s %-8s %-12s %-6s %s%n",
        "region", "range", "primary", "backups", "epoch", "state");
    for (RegionDescriptor region : map.regions()) {
      out.printf(
          "%-6d %-28s %-8s %-12s %-6d %s%n",
          region.id(),
          region.rangeText(),
          region.primary().isEmpty() ? "-" : region.primary(),
          region.backups().isEmpty() ? "-" : String.join(",", region.backups()),
          region.epoch(),
          region.state());
    }
    out.println("(" + map.size() + " regions)");
  }

  private void servers(RegionMap map) {
    Map<String, List<List<Long>>> roles = new TreeMap<>();
    for (RegionDescriptor region : map.regions()) {
      if (!region.primary().isEmpty()) {
        roles.computeIfAbsent(region.primary(), s -> newRoles()).get(0).add(region.id());
      }
      for (String backup : region.backups()) {
        roles.computeIfAbsent(backup, s -> newRoles()).get(1).add(region.id());
      }
    }
    out.printf("%-8s %-24s %s%n", "server", "primary of", "backup of");
    roles.forEach(
        (server, held) ->
            out.printf("%-8s %-24s %s%n", server, describe(held.get(0)), describe(held.get(1))));
    out.println("(" + roles.size() + " servers in the region map)");
  }

  private static List<List<Long>> newRoles() {
    return List.of(new ArrayList<>(), new ArrayList<>());
  }

  private static String describe(List<Long> regions) {
    if (regions.isEmpty()) {
      return "-";
    }
    StringBuilder ids = new StringBuilder();
    for (Long id : regions) {
      ids.append(ids.length() == 0 ? "" : ",").append(id);
    }
    return regions.size() + " (" + ids + ")";
  }

  private static void arity(List<byte[]> args, int min, int max, String usage) {
    if (args.size() < min || args.size() > max) {
      throw new IllegalArgumentException("usage: " + usage);
    }
  }

  /** Reports what {@code e} says: a usage or input error, or the status of a failed operation. */
  private Outcome fail(RuntimeException e) {
    if (e instanceof KvsException failure) {
      return fail(failure.status() + ": " + failure.getMessage());
    }
    if (e instanceof IllegalArgumentException) {
      return fail(e.getMessage());
    }
    return fail(e.toString());
  }

  private Outcome fail(String message) {
    out.flush();
    err.println("error: " + message);
    err.flush();
    return Outcome.FAILED;
  }
}
