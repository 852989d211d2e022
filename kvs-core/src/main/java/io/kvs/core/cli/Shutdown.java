package io.kvs.core.cli;

/** How the KVS processes (ZooKeeper, master, region server) run until they are told to stop. */
public final class Shutdown {
  private Shutdown() {}

  /**
   * Closes {@code resources}, in order, when the JVM is asked to stop (SIGTERM, Ctrl-C), and blocks
   * the calling thread until then. A resource that fails to close is reported on standard error and
   * the others are still closed.
   */
  public static void closeOnStopAndWait(String name, AutoCloseable... resources)
      throws InterruptedException {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  for (AutoCloseable resource : resources) {
                    try {
                      resource.close();
                    } catch (Exception e) {
                      System.err.println("stopping the " + name + ": " + e);
                    }
                  }
                },
                "kvs-" + name + "-shutdown"));
    Thread.currentThread().join(); // until the JVM exits: the hook does the work
  }
}
