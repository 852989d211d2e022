package io.kvs.client;

import io.kvs.core.KvsException;
import io.kvs.core.StatusCode;
import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import io.kvs.fabric.FabricClient;
import java.util.concurrent.CompletableFuture;

/**
 * A fabric transport connection. A {@link FabricClient} closes itself on any connection error and
 * fails what is outstanding; this notices, so that the pool connects again.
 */
final class FabricConnection implements Connection {
  private final FabricClient client;
  private volatile boolean open = true;

  FabricConnection(FabricClient client) {
    this.client = client;
  }

  @Override
  public CompletableFuture<Reply> send(Request request) {
    CompletableFuture<Reply> reply = client.send(request);
    reply.whenComplete(
        (ok, error) -> {
          if (error != null && !requestOnly(error)) {
            open = false;
          }
        });
    return reply;
  }

  /** Failures that concern one request and leave the connection usable. */
  private static boolean requestOnly(Throwable error) {
    return error instanceof KvsException kvs
        && (kvs.status() == StatusCode.TOO_LARGE || kvs.status() == StatusCode.OVERLOADED);
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void close() {
    open = false;
    client.close();
  }
}
