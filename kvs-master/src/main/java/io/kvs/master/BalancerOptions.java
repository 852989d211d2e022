package io.kvs.master;

import java.time.Duration;

/**
 * How the master balances the cluster by itself ({@link Balancer}; docs/ARCHITECTURE.md "Balancing
 * by itself").
 *
 * @param enabled whether it moves replicas and leadership on its own ({@code --balancer on|off});
 *     off, it still finishes a replica move it began (drops the surplus replica once the new one is
 *     in sync), and {@code ./kvs admin balance} still works
 * @param interval the least time between two balancing rounds ({@code --balance-interval-ms}): a
 *     round plans moves only then, and only in a cluster with nothing to repair
 * @param movesInFlight how many regions may be moving at once ({@code --balance-moves}): a region
 *     moves while a backup of it is joining (catching up) or it has a replica more than the
 *     replication factor; failure recovery's catch-ups count too
 * @param regionQuiet how long a region the balancer moved is not moved by it again the same way
 *     (its replicas, or its leadership; {@link #REGION_QUIET_ROUNDS} intervals from the command
 *     line)
 */
public record BalancerOptions(
    boolean enabled, Duration interval, int movesInFlight, Duration regionQuiet) {
  /** A region the balancer moved rests this many intervals before it moves it again. */
  public static final int REGION_QUIET_ROUNDS = 6;

  /** The defaults: on, a round at most every 10 s, 2 regions moving at once, 60 s per region. */
  public static final BalancerOptions DEFAULT =
      new BalancerOptions(
          true,
          Duration.ofSeconds(10),
          2,
          Duration.ofSeconds(10).multipliedBy(REGION_QUIET_ROUNDS));

  public BalancerOptions {
    if (interval.isNegative() || regionQuiet.isNegative()) {
      throw new IllegalArgumentException("negative balancer interval");
    }
    if (movesInFlight < 1) {
      throw new IllegalArgumentException("--balance-moves must be at least 1: " + movesInFlight);
    }
  }

  /** These options, switched on or off. */
  public BalancerOptions withEnabled(boolean on) {
    return new BalancerOptions(on, interval, movesInFlight, regionQuiet);
  }
}
