package io.kvs.tools.shell;

import io.kvs.client.KvsClient;
import io.kvs.client.Transport;
import io.kvs.core.KvsException;
import io.kvs.core.security.SecurityOptions;
import io.kvs.tools.ClusterTarget;
import io.kvs.tools.admin.Admin;
import io.kvs.tools.admin.AdminCommands;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code ./kvs shell}: reads and writes keys of a running cluster, one command a line.
 *
 * <pre>
 * Shell [--dir DIR | --zookeeper HOST:PORT [--cluster NAME]] [--transport tcp|fabric]
 *       [--timeout SECONDS] [-e COMMAND]... [-- COMMAND WORDS...]
 * </pre>
 *
 * It connects to the local cluster whose directory is {@code --dir} (its {@code cluster.properties}
 * names ZooKeeper and the cluster), or to the cluster {@code --zookeeper} and {@code --cluster}
 * name (which win over {@code --dir}). Without {@code -e} or {@code --} it reads commands from
 * standard input, with a prompt when that is a terminal; piped input works the same way, without
 * the prompt. {@code -e COMMAND} (repeatable) runs the commands given and exits; {@code -- put k "a
 * b"} runs one command whose words are the arguments. The commands are listed by {@code help}
 * ({@link Commands#HELP}); keys and values are text as {@link Text} describes.
 *
 * <p>Exit status: 0 if every command succeeded, 1 if one failed (input that is not a terminal, or
 * {@code -e}/{@code --}), 2 for bad options or no cluster to connect to.
 */
public final class Shell {
  private static final String USAGE =
      "usage: ./kvs shell [--dir DIR | --zookeeper HOST:PORT [--cluster NAME]]"
          + " [--transport tcp|fabric] [--timeout SECONDS] [-e COMMAND]... [[--] COMMAND WORD...]";

  private Shell() {}

  /** Runs the shell on the process's standard streams and exits with its status. */
  public static void main(String[] args) {
    PrintWriter out =
        new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
    PrintWriter err =
        new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
    Reader stdin = new InputStreamReader(System.in, StandardCharsets.UTF_8);
    int status = run(args, new BufferedReader(stdin), out, err, System.console() != null);
    out.flush();
    err.flush();
    System.exit(status);
  }

  /**
   * Runs the shell: parses {@code args}, connects, runs the commands.
   *
   * @param in where commands are read unless {@code args} give them
   * @param interactive whether {@code in} is a person at a terminal: prompt, greeting, status 0
   * @return the exit status
   */
  static int run(
      String[] args, BufferedReader in, PrintWriter out, PrintWriter err, boolean interactive) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      err.println("kvs shell: " + e.getMessage());
      err.println(USAGE);
      err.flush();
      return 2;
    }
    if (options.help) {
      out.println(USAGE);
      out.println(Commands.HELP);
      out.flush();
      return 0;
    }
    String[] target;
    try {
      target = options.target();
    } catch (IllegalArgumentException | IOException e) {
      err.println("kvs shell: " + e.getMessage());
      err.flush();
      return 2;
    }
    KvsClient client;
    try {
      client =
          KvsClient.builder()
              .zookeeper(target[0])
              .cluster(target[1])
              .transport(options.transport)
              .operationTimeout(options.timeout)
              .security(
                  options.dir != null
                      ? SecurityOptions.forClusterDirectory(options.dir, "client")
                      : SecurityOptions.none())
              .build();
    } catch (KvsException | IllegalArgumentException e) {
      err.printf(
          "kvs shell: cannot connect to cluster '%s' at %s: %s%n",
          target[1], target[0], e.getMessage());
      err.flush();
      return 2;
    }
    List<Admin> admins = new ArrayList<>();
    ClusterTarget cluster = new ClusterTarget(target[0], target[1]);
    try (client) {
      Commands commands =
          new Commands(
              client,
              out,
              err,
              output -> {
                Admin admin =
                    Admin.connect(
                        cluster,
                        options.dir != null && options.zookeeper == null
                            ? SecurityOptions.forClusterDirectory(options.dir, "admin")
                            : SecurityOptions.none(),
                        options.timeout);
                admins.add(admin);
                return new AdminCommands(admin, output, Duration.ofMinutes(5));
              });
      if (!options.commands.isEmpty() || options.words != null) {
        return runGiven(options, commands);
      }
      if (interactive) {
        out.printf(
            "connected to cluster '%s' at %s over %s: %d regions. help lists the commands.%n",
            target[1],
            target[0],
            options.transport.name().toLowerCase(Locale.ROOT),
            client.regionMap().size());
      }
      return repl(in, out, commands, interactive);
    } finally {
      admins.forEach(Admin::close);
    }
  }

  private static int runGiven(Options options, Commands commands) {
    boolean failed = false;
    for (String command : options.commands) {
      Commands.Outcome outcome = commands.execute(command);
      failed |= outcome == Commands.Outcome.FAILED;
      if (outcome == Commands.Outcome.QUIT) {
        return failed ? 1 : 0;
      }
    }
    if (options.words != null) {
      List<byte[]> words = new ArrayList<>();
      for (String word : options.words) {
        words.add(Text.word(word));
      }
      failed |= commands.execute(words) == Commands.Outcome.FAILED;
    }
    return failed ? 1 : 0;
  }

  private static int repl(
      BufferedReader in, PrintWriter out, Commands commands, boolean interactive) {
    boolean failed = false;
    while (true) {
      if (interactive) {
        out.print("kvs> ");
        out.flush();
      }
      String line;
      try {
        line = in.readLine();
      } catch (IOException e) {
        out.println();
        out.flush();
        return 2;
      }
      if (line == null) {
        if (interactive) {
          out.println();
          out.flush();
        }
        break;
      }
      Commands.Outcome outcome = commands.execute(line);
      if (outcome == Commands.Outcome.QUIT) {
        break;
      }
      failed |= outcome == Commands.Outcome.FAILED;
    }
    return failed && !interactive ? 1 : 0;
  }

  /** The command line. */
  private static final class Options {
    Path dir;
    String zookeeper;
    String cluster;
    Transport transport = Transport.TCP;
    Duration timeout = Duration.ofSeconds(10);
    final List<String> commands = new ArrayList<>();
    List<String> words;
    boolean help;

    static Options parse(String[] args) {
      Options options = new Options();
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (arg.equals("--") || !arg.startsWith("-")) {
          // The rest is one command, word by word: "-- put k v", or just "put k v".
          options.words = List.of(args).subList(arg.equals("--") ? i + 1 : i, args.length);
          break;
        }
        if (arg.equals("-h") || arg.equals("--help")) {
          options.help = true;
          continue;
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("unknown option or missing value: " + arg);
        }
        String value = args[++i];
        switch (arg) {
          case "--dir" -> options.dir = Path.of(value);
          case "--zookeeper" -> options.zookeeper = value;
          case "--cluster" -> options.cluster = value;
          case "--transport" -> options.transport = transport(value);
          case "--timeout" -> options.timeout = seconds(value);
          case "-e" -> options.commands.add(value);
          default -> throw new IllegalArgumentException("unknown option " + arg);
        }
      }
      return options;
    }

    private static Transport transport(String value) {
      return switch (value.toLowerCase(Locale.ROOT)) {
        case "tcp" -> Transport.TCP;
        case "fabric" -> Transport.FABRIC;
        default -> throw new IllegalArgumentException("--transport is tcp or fabric, not " + value);
      };
    }

    private static Duration seconds(String value) {
      try {
        double seconds = Double.parseDouble(value);
        if (seconds > 0) {
          return Duration.ofMillis(Math.max(1, (long) (seconds * 1000)));
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw new IllegalArgumentException("--timeout takes a positive number of seconds: " + value);
    }

    /** The ZooKeeper connect string and the cluster name to connect to. */
    String[] target() throws IOException {
      ClusterTarget target = ClusterTarget.resolve(dir, zookeeper, cluster);
      return new String[] {target.zookeeper(), target.cluster()};
    }
  }
}
