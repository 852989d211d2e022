package io.kvs.bench.chaos;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * What the campaign must undo however it ends (iptables rules and cgroups, silent connections, a
 * filler file): each fault registers what it set up and removes it once healed; {@link #closeAll()}
 * runs from the campaign's finally block and its shutdown hook.
 */
final class Cleanup {
  private final Deque<AutoCloseable> open = new ArrayDeque<>();

  /** Registers {@code resource}; returns it. */
  synchronized <T extends AutoCloseable> T add(T resource) {
    open.push(resource);
    return resource;
  }

  /** Closes {@code resource} now and forgets it. */
  void close(AutoCloseable resource) throws Exception {
    synchronized (this) {
      open.remove(resource);
    }
    resource.close();
  }

  /** Closes everything still registered, newest first; returns what failed. */
  List<String> closeAll() {
    List<String> failures = new ArrayList<>();
    while (true) {
      AutoCloseable resource;
      synchronized (this) {
        resource = open.poll();
      }
      if (resource == null) {
        return failures;
      }
      try {
        resource.close();
      } catch (Exception e) {
        failures.add(resource + ": " + e);
      }
    }
  }
}
