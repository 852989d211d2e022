package io.kvs.server.control;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.control.ControlReply;

/**
 * An open that names this server a backup in sync (not joining) of a region whose replication
 * stream it does not hold: it restarted since it last held the region, closed it, or its engine
 * region stopped. What its disk holds of the region may lack acknowledged writes that had landed
 * only in the old process's memory, so it must not be counted in sync (a backup in sync may be
 * promoted). The control server answers with {@link ControlReply#REJOIN}, and the master opens the
 * region again with this server joining (its stream starting over).
 */
public final class NotInSyncException extends KvsException {
  private static final long serialVersionUID = 1L;

  public NotInSyncException(String message) {
    super(StatusCode.INVALID_ARGUMENT, message);
  }
}
