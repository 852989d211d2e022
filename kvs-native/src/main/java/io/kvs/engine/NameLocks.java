package io.kvs.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per region name while anyone holds or waits for it: opening, creating, dropping and
 * reopening a region take its name's lock for the native call, so changes of one region are ordered
 * while those of different regions run at once (a promotion syncs and replays for tens of
 * milliseconds; a server promoting eight regions must not do it one after another). Entries live
 * only while used, so the map is bounded by the calls in progress.
 */
final class NameLocks {
  /** A held lock; closing releases it. */
  interface Held {
    void close();
  }

  private static final class Entry {
    final ReentrantLock lock = new ReentrantLock();
    int users;
  }

  private final Map<String, Entry> entries = new HashMap<>();

  /** Waits for and takes {@code name}'s lock (reentrant). */
  Held lock(String name) {
    Entry entry;
    synchronized (entries) {
      entry = entries.computeIfAbsent(name, n -> new Entry());
      entry.users++;
    }
    entry.lock.lock();
    return () -> {
      entry.lock.unlock();
      synchronized (entries) {
        if (--entry.users == 0) {
          entries.remove(name);
        }
      }
    };
  }

  /**
   * Takes the locks of every name in {@code names}, in name order (so two callers naming the same
   * names never wait for each other in a cycle); closing the result releases them all.
   */
  Held lockAll(List<String> names) {
    List<Held> held = new ArrayList<>();
    for (String name : new TreeSet<>(names)) {
      held.add(lock(name));
    }
    return () -> {
      for (int i = held.size() - 1; i >= 0; i--) {
        held.get(i).close();
      }
    };
  }
}
