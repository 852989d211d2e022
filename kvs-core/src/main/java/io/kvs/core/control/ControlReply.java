package io.kvs.core.control;

import io.kvs.core.StatusCode;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A region server's answer to a {@link ControlCommand}: a status, a message when it failed, for
 * {@link ControlCommand.ListRegions} the regions it holds, and for {@link ControlCommand.Stats} its
 * counters by name.
 */
public record ControlReply(
    StatusCode status, String message, List<HeldRegion> regions, Map<String, Long> stats) {
  /**
   * In a STALE_EPOCH refusal of {@code open} or {@code close}: the highest epoch the server
   * accepted for the region (a master moves the region past it).
   */
  public static final String EPOCH = "epoch";

  /**
   * In a refusal of {@code open} (value 1): the server holds no replication stream of the region
   * (it restarted, closed it or its engine region stopped since), so it cannot be opened as a
   * backup in sync; the master opens the region again with the server joining.
   */
  public static final String REJOIN = "rejoin";

  public ControlReply {
    message = message == null ? "" : message;
    regions = List.copyOf(regions == null ? List.of() : regions);
    stats = java.util.Collections.unmodifiableMap(new TreeMap<>(stats == null ? Map.of() : stats));
  }

  public ControlReply(StatusCode status, String message, List<HeldRegion> regions) {
    this(status, message, regions, Map.of());
  }

  public static ControlReply ok() {
    return new ControlReply(StatusCode.OK, "", List.of());
  }

  public static ControlReply failed(StatusCode status, String message) {
    return new ControlReply(status, message, List.of());
  }

  public boolean isOk() {
    return status == StatusCode.OK;
  }
}
