package io.kvs.tools.local;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./kvs local join s4}: a region server new to a running local cluster, started as the
 * cluster's first server was (the same JVM, native library, secrets, TLS and server flags), with
 * its own id, directory and log. The master's balancer then gives it its share of replicas and
 * leadership (docs/ARCHITECTURE.md, "Balancing by itself"). The server is recorded in {@code
 * cluster.properties}, so that {@code restart}, {@code kill} and {@code stop} find it.
 */
final class LocalJoin {
  private static final Pattern SERVER_ID = Pattern.compile("s[0-9]+");

  private final ClusterDirectory directory;

  LocalJoin(ClusterDirectory directory) {
    this.directory = directory;
  }

  /** Starts server {@code id}; returns the exit status for the command. */
  int run(String id) throws Exception {
    if (!SERVER_ID.matcher(id).matches()) {
      throw new IllegalArgumentException("a new server's id is s<N> (e.g. s4), not " + id);
    }
    Map<String, String> state = directory.load();
    String name = "server-" + id;
    if (state.containsKey("pid." + name)) {
      throw new IllegalStateException(
          name
              + " is part of this cluster already; ./kvs local restart "
              + id
              + " starts it again");
    }
    String template =
        state.keySet().stream()
            .filter(key -> key.startsWith("command.server-"))
            .map(key -> key.substring("command.server-".length()))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("no region server recorded to copy"));
    List<String> command =
        commandFor(
            LocalProcesses.recordedCommand(state, "server-" + template),
            template,
            id,
            directory.server(id));
    Map<String, String> environment = new LinkedHashMap<>();
    LocalProcesses.environment(state, "server-" + template)
        .forEach((variable, value) -> environment.put(variable, renamed(value, template, id)));
    LocalProcesses.spawnCommand(directory, state, name, command, environment);
    System.out.printf(
        "started %s (pid %s) as %s was started; logs in %s%n",
        name, state.get("pid." + name), "server-" + template, directory.logs());
    return 0;
  }

  /**
   * Server {@code template}'s command line made server {@code id}'s: the values of {@code --id} and
   * {@code --dir} replaced, and its name in file names ({@code server-s1-jvm-...}) too.
   */
  static List<String> commandFor(List<String> template, String templateId, String id, Path dir) {
    List<String> command = new ArrayList<>(template.size());
    for (int i = 0; i < template.size(); i++) {
      String previous = i == 0 ? "" : template.get(i - 1);
      String argument = template.get(i);
      if (previous.equals("--id")) {
        command.add(id);
      } else if (previous.equals("--dir")) {
        command.add(dir.toString());
      } else {
        command.add(renamed(argument, templateId, id));
      }
    }
    return command;
  }

  /** {@code text} with the process name {@code server-<from>} as a whole word made {@code to}'s. */
  private static String renamed(String text, String from, String to) {
    return Pattern.compile("server-" + Pattern.quote(from) + "(?![0-9A-Za-z])")
        .matcher(text)
        .replaceAll(Matcher.quoteReplacement("server-" + to));
  }
}
