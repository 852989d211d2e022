package io.kvs.tools.local;

import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.HeldRegion;
import io.kvs.core.security.SecurityOptions;
import io.kvs.master.status.RegionHealth;
import io.kvs.master.status.ServerProbe;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * What a local cluster's servers actually hold (control {@code list}, as the master's reconciler
 * asks it), so that {@code ./kvs local status} judges regions by it rather than by the map alone.
 */
final class ServedRegions {
  /**
   * Bound on each server's answer: generous (a tool run by hand, on a machine that may be loaded),
   * yet a paused server costs status no more than this.
   */
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);

  /** How long status waits for all servers' answers; a server silent that long is reported so. */
  static final Duration WAIT = CALL_TIMEOUT.plusSeconds(1);

  private ServedRegions() {}

  /**
   * What each live server holds, by server id; null for a server that did not answer within {@link
   * #WAIT} (the shape {@link RegionHealth#of} takes).
   */
  static Map<String, Map<Long, HeldRegion>> held(
      Map<String, ServerInfo> servers, SecurityOptions security) {
    Map<String, Map<Long, HeldRegion>> held = new HashMap<>();
    try (ControlClient control = new ControlClient(CALL_TIMEOUT, security);
        ServerProbe probe = new ServerProbe(control, CALL_TIMEOUT, Duration.ZERO)) {
      probe
          .probeAll(servers.values(), WAIT)
          .forEach((id, answer) -> held.put(id, answer.answered() ? answer.held() : null));
    }
    return held;
  }

  /**
   * Whether a region of this health answers clients: it is open and every member holds it as the
   * map says (an under-replicated region serves; one whose members did not all answer is not
   * counted, nothing being known of them).
   */
  static boolean served(RegionHealth health) {
    return health.health().equals(RegionHealth.SERVING)
        || health.health().equals(RegionHealth.UNDER_REPLICATED);
  }
}
