package io.kvs.tools.admin;

import io.kvs.core.cli.Flags;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.ClusterTarget;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code ./kvs admin}: one admin command ({@link AdminCommands#HELP}) against a running cluster.
 *
 * <pre>
 * AdminMain [--dir DIR | --zookeeper HOST:PORT [--cluster NAME]] [--wait SECONDS]
 *           [--secret-file FILE] [--tls-cert PEM --tls-key PEM --tls-ca PEM]
 *           [--zookeeper-digest-file FILE] COMMAND ARGS...
 * </pre>
 *
 * Against a local cluster ({@code --dir}) it finds the cluster secret and TLS certificates in its
 * directory; otherwise the flags give them (docs/OPERATIONS.md, "Security").
 *
 * <p>Exit status: 0 when the command did what it says, 1 when it could not (the reason on standard
 * error), 2 for bad options or no cluster to connect to.
 */
public final class AdminMain {
  private static final String USAGE =
      "usage: ./kvs admin [--dir DIR | --zookeeper HOST:PORT [--cluster NAME]] [--wait SECONDS]"
          + " [--secret-file FILE] [--tls-cert PEM --tls-key PEM --tls-ca PEM]"
          + " [--zookeeper-digest-file FILE] COMMAND [ARGS...]";

  private AdminMain() {}

  public static void main(String[] args) {
    PrintWriter out =
        new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
    PrintWriter err =
        new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
    int status = run(args, out, err);
    out.flush();
    err.flush();
    System.exit(status);
  }

  /** Runs the command {@code args} give; the exit status. */
  public static int run(String[] args, PrintWriter out, PrintWriter err) {
    Path dir = null;
    String zookeeper = null;
    String cluster = null;
    Duration wait = Duration.ofMinutes(5);
    List<String> words = new ArrayList<>();
    List<String> securityFlags = new ArrayList<>();
    try {
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (!words.isEmpty() || !arg.startsWith("--") || arg.equals("--no-wait")) {
          words.add(arg);
          continue;
        }
        if (arg.equals("--help")) {
          out.println(USAGE);
          out.println(AdminCommands.HELP);
          return 0;
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("missing value of " + arg);
        }
        String value = args[++i];
        switch (arg) {
          case "--dir" -> dir = Path.of(value);
          case "--zookeeper" -> zookeeper = value;
          case "--cluster" -> cluster = value;
          case "--wait" -> wait = Duration.ofSeconds(Long.parseLong(value));
          default -> {
            if (!SecurityOptions.FLAG_NAMES.contains(arg.substring(2))) {
              throw new IllegalArgumentException("unknown option " + arg);
            }
            securityFlags.addAll(List.of(arg, value));
          }
        }
      }
      if (words.isEmpty()) {
        throw new IllegalArgumentException("no command given");
      }
    } catch (IllegalArgumentException e) {
      err.println("kvs admin: " + e.getMessage());
      err.println(USAGE);
      err.println(AdminCommands.HELP);
      return 2;
    }
    ClusterTarget target;
    Admin admin;
    try {
      target = ClusterTarget.resolve(dir, zookeeper, cluster);
      SecurityOptions security =
          !securityFlags.isEmpty() || dir == null
              ? SecurityOptions.fromFlags(
                  Flags.parse(securityFlags.toArray(String[]::new), SecurityOptions.FLAG_NAMES))
              : SecurityOptions.forClusterDirectory(dir, "admin");
      admin = Admin.connect(target, security, Duration.ofSeconds(10));
    } catch (Exception e) {
      err.println("kvs admin: " + e.getMessage());
      return 2;
    }
    try (admin) {
      new AdminCommands(admin, out, wait).run(words);
      return 0;
    } catch (AdminCommands.AdminException e) {
      err.println("kvs admin: " + e.getMessage());
      return 1;
    } catch (Exception e) {
      err.println("kvs admin: " + e);
      return 1;
    }
  }
}
