package io.kvs.core.control;

import io.kvs.core.StatusCode;
import java.util.List;

/**
 * A region server's answer to a {@link ControlCommand}: a status, a message when it failed, and for
 * {@link ControlCommand.ListRegions} the regions it holds.
 */
public record ControlReply(StatusCode status, String message, List<HeldRegion> regions) {
  public ControlReply {
    message = message == null ? "" : message;
    regions = List.copyOf(regions == null ? List.of() : regions);
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
