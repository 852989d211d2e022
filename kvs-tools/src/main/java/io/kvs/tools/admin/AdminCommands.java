package io.kvs.tools.admin;

import io.kvs.core.cluster.Keys;
import io.kvs.core.cluster.MoveRequest;
import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.ServerInfo;
import io.kvs.master.Balance;
import io.kvs.tools.TextTable;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The admin commands as words in, text out: what {@code ./kvs admin} and the shell's {@code admin}
 * command run. Results go to {@code out}; a command that fails throws {@link AdminException} with
 * the message to show.
 */
public final class AdminCommands {
  public static final String HELP =
      String.join(
          "\n",
          "admin commands:",
          "  servers                     live servers: ports, replicas held, decommissioned or not",
          "  regions                     every region: range, primary, backups, epoch, state",
          "  stats <region>              a region's counters on each of its members",
          "  move <region> <server>      hand the region's primary over to <server>, one of its"
              + " backups",
          "  split <region> [key]        split the region in two at <key> (UTF-8; default: the"
              + " middle of the region by size)",
          "  merge <region>              merge the region with its neighbour above (given one"
              + " replica group first)",
          "  decommission <server>       move every replica off <server>; then it may stop",
          "  recommission <server>       let a decommissioned server hold replicas again",
          "  balance                     hand primaries over so that every server leads about as"
              + " many regions",
          "  balancer [on|off]           whether the master balances replicas and leadership by"
              + " itself (on unless switched off here or its --balancer off)",
          "  (move, split, merge and decommission wait until done; add --no-wait to return at"
              + " once)");

  /** A command that could not be done; its message says why. */
  public static final class AdminException extends RuntimeException {
    public AdminException(String message) {
      super(message);
    }
  }

  private final Admin admin;
  private final PrintWriter out;
  private final Duration wait;

  /**
   * @param wait how long {@code move} and {@code decommission} wait for the master to finish
   */
  public AdminCommands(Admin admin, PrintWriter out, Duration wait) {
    this.admin = admin;
    this.out = out;
    this.wait = wait;
  }

  /** Runs one admin command. */
  public void run(List<String> words) throws Exception {
    if (words.isEmpty()) {
      throw new AdminException("an admin command is missing\n" + HELP);
    }
    boolean noWait = words.contains("--no-wait");
    List<String> args =
        words.subList(1, words.size()).stream().filter(w -> !w.equals("--no-wait")).toList();
    try {
      switch (words.get(0)) {
        case "servers" -> servers(args);
        case "regions" -> regions(args);
        case "stats" -> stats(args);
        case "move" -> move(args, noWait);
        case "split" -> split(args, noWait);
        case "merge" -> merge(args, noWait);
        case "decommission" -> decommission(args, noWait);
        case "recommission" -> recommission(args);
        case "balance" -> balance(args, noWait);
        case "balancer" -> balancer(args);
        case "help" -> out.println(HELP);
        default ->
            throw new AdminException("unknown admin command '" + words.get(0) + "'\n" + HELP);
      }
    } catch (IllegalArgumentException e) {
      throw new AdminException(e.getMessage());
    } finally {
      out.flush();
    }
  }

  private void servers(List<String> args) throws Exception {
    arity(args, 0, "servers");
    Map<String, ServerInfo> live = admin.servers();
    Set<String> decommissioned = admin.decommissioned();
    List<RegionDescriptor> regions = admin.regions().regions();
    Set<String> ids = new TreeSet<>(live.keySet());
    regions.forEach(region -> ids.addAll(region.members()));
    ids.addAll(decommissioned);
    TextTable table =
        new TextTable(3, "server", "state", "host", "tcp", "control", "http", "primary", "backup");
    for (String id : ids) {
      ServerInfo info = live.get(id);
      long primary = regions.stream().filter(r -> r.primary().equals(id)).count();
      long backup = regions.stream().filter(r -> r.backups().contains(id)).count();
      String state =
          (info == null ? "gone" : "live")
              + (decommissioned.contains(id) ? ", decommissioned" : "");
      table.row(
          id,
          state,
          info == null ? "-" : info.host(),
          info == null ? "-" : Integer.toString(info.tcpPort()),
          info == null ? "-" : Integer.toString(info.controlPort()),
          info == null || info.httpPort() == 0 ? "-" : Integer.toString(info.httpPort()),
          Long.toString(primary),
          Long.toString(backup));
    }
    out.print(table);
  }

  private void regions(List<String> args) throws Exception {
    arity(args, 0, "regions");
    Map<Long, MoveRequest> moves = admin.moves();
    TextTable table =
        new TextTable(6, "region", "range", "primary", "backups", "joining", "state", "epoch");
    for (RegionDescriptor region : admin.regions().regions()) {
      MoveRequest move = moves.get(region.id());
      table.row(
          Long.toString(region.id()),
          region.rangeText(),
          region.primary(),
          String.join(",", region.backups()),
          String.join(",", region.joining()),
          region.state()
              + (move == null
                  ? ""
                  : move.isRefused()
                      ? " (move to " + move.to() + " refused)"
                      : " (moving to " + move.to() + ")"),
          Long.toString(region.epoch()));
    }
    out.print(table);
  }

  private void stats(List<String> args) throws Exception {
    arity(args, 1, "stats <region>");
    long regionId = regionId(args.get(0));
    Map<String, Map<String, Long>> stats = admin.regionStats(regionId);
    Set<String> names = new TreeSet<>();
    stats.values().forEach(counters -> names.addAll(counters.keySet()));
    String[] header = new String[stats.size() + 1];
    header[0] = "counter";
    int column = 1;
    for (String member : stats.keySet()) {
      header[column++] = member;
    }
    TextTable table = new TextTable(1, header);
    for (String name : names) {
      String[] row = new String[header.length];
      row[0] = name;
      column = 1;
      for (Map<String, Long> counters : stats.values()) {
        Long value = counters.get(name);
        row[column++] = value == null ? "-" : Long.toString(value);
      }
      table.row(row);
    }
    out.printf("region %d%n", regionId);
    out.print(table);
    stats.forEach(
        (member, counters) -> {
          if (counters.isEmpty()) {
            out.printf("(%s did not answer)%n", member);
          }
        });
  }

  private void move(List<String> args, boolean noWait) throws Exception {
    arity(args, 2, "move <region> <server>");
    long regionId = regionId(args.get(0));
    String server = args.get(1);
    admin.requestMove(regionId, server);
    if (noWait) {
      out.printf("requested: region %d's primary moves to %s%n", regionId, server);
      return;
    }
    String failure = admin.awaitMove(regionId, server, wait);
    if (failure != null) {
      throw new AdminException("move of region " + regionId + " to " + server + ": " + failure);
    }
    RegionDescriptor region = admin.region(regionId);
    out.printf(
        "region %d: primary %s at epoch %d (backups %s)%n",
        regionId, region.primary(), region.epoch(), String.join(",", region.backups()));
  }

  private void merge(List<String> args, boolean noWait) throws Exception {
    if (args.size() != 1) {
      throw new AdminException("usage: merge <region>");
    }
    long regionId = regionId(args.get(0));
    RegionDescriptor left = admin.region(regionId);
    RegionDescriptor right;
    try {
      right = admin.requestMerge(regionId);
    } catch (IllegalArgumentException e) {
      throw new AdminException("merge of region " + regionId + ": " + e.getMessage());
    }
    if (noWait) {
      out.printf("requested: regions %d and %d merge%n", regionId, right.id());
      return;
    }
    RegionDescriptor merged;
    try {
      merged = admin.awaitMerge(left, right, wait);
    } catch (IllegalStateException e) {
      throw new AdminException("merge of region " + regionId + ": " + e.getMessage());
    }
    out.printf(
        "region %d %s: primary %s at epoch %d (backups %s)%n",
        merged.id(),
        merged.rangeText(),
        merged.primary(),
        merged.epoch(),
        String.join(",", merged.backups()));
  }

  private void split(List<String> args, boolean noWait) throws Exception {
    if (args.isEmpty() || args.size() > 2) {
      throw new AdminException("usage: split <region> [key]");
    }
    long regionId = regionId(args.get(0));
    byte[] key = args.size() == 2 ? Keys.utf8(args.get(1)) : new byte[0];
    RegionDescriptor parent = admin.region(regionId);
    admin.requestSplit(regionId, key);
    if (noWait) {
      out.printf("requested: region %d splits%n", regionId);
      return;
    }
    List<RegionDescriptor> daughters;
    try {
      daughters = admin.awaitSplit(parent, wait);
    } catch (IllegalStateException e) {
      throw new AdminException("split of region " + regionId + ": " + e.getMessage());
    }
    for (RegionDescriptor daughter : daughters) {
      out.printf(
          "region %d %s: primary %s at epoch %d (backups %s)%n",
          daughter.id(),
          daughter.rangeText(),
          daughter.primary(),
          daughter.epoch(),
          String.join(",", daughter.backups()));
    }
  }

  private void decommission(List<String> args, boolean noWait) throws Exception {
    arity(args, 1, "decommission <server>");
    String server = args.get(0);
    admin.decommission(server);
    int held = admin.regionsOf(server).size();
    if (noWait) {
      out.printf("%s is decommissioned; %d regions to move off it%n", server, held);
      return;
    }
    List<RegionDescriptor> left = admin.awaitDrained(server, wait);
    if (!left.isEmpty()) {
      throw new AdminException(
          server
              + " still holds "
              + left.size()
              + " regions after "
              + wait.toSeconds()
              + " s (e.g. region "
              + left.get(0).id()
              + ": "
              + left.get(0)
              + "); the master goes on moving them");
    }
    out.printf("%s holds no region any more (%d moved off); it may stop%n", server, held);
  }

  private void balance(List<String> args, boolean noWait) throws Exception {
    arity(args, 0, "balance");
    List<Balance.Move> moves =
        Balance.plan(admin.regions().regions(), admin.servers().keySet(), admin.decommissioned());
    if (moves.isEmpty()) {
      out.println("leadership is balanced: nothing to move");
      return;
    }
    for (Balance.Move move : moves) {
      admin.requestMove(move.regionId(), move.target());
      out.printf("region %d: primary %s -> %s%n", move.regionId(), move.from(), move.target());
      out.flush();
    }
    if (noWait) {
      return;
    }
    List<String> failures = new ArrayList<>();
    for (Balance.Move move : moves) {
      String failure = admin.awaitMove(move.regionId(), move.target(), wait);
      if (failure != null) {
        failures.add("region " + move.regionId() + ": " + failure);
      }
    }
    if (!failures.isEmpty()) {
      throw new AdminException(String.join("\n", failures));
    }
    out.printf("%d primaries handed over%n", moves.size());
  }

  private void balancer(List<String> args) throws Exception {
    if (args.size() > 1 || (args.size() == 1 && !List.of("on", "off").contains(args.get(0)))) {
      throw new AdminException("usage: admin balancer [on|off]");
    }
    if (!args.isEmpty()) {
      admin.switchBalancer(args.get(0).equals("on"));
    }
    out.println(
        admin.balancerOn()
            ? "the balancer is on: the master moves replicas and leadership by itself"
                + " (unless it runs with --balancer off)"
            : "the balancer is off: the master moves nothing by itself until 'balancer on'");
  }

  private void recommission(List<String> args) throws Exception {
    arity(args, 1, "recommission <server>");
    boolean was = admin.recommission(args.get(0));
    out.printf(was ? "%s may hold replicas again%n" : "%s was not decommissioned%n", args.get(0));
  }

  private static long regionId(String word) {
    try {
      return Long.parseLong(word);
    } catch (NumberFormatException e) {
      throw new AdminException("a region is given by its number, not '" + word + "'");
    }
  }

  private static void arity(List<String> args, int count, String usage) {
    if (args.size() != count) {
      throw new AdminException("usage: admin " + usage);
    }
  }
}
