package io.kvs.bench.protocol;

import io.kvs.core.wire.Reply;
import io.kvs.core.wire.Request;
import java.util.concurrent.CompletableFuture;

/** A client connection of one transport, as the benchmark drives it. */
interface WireTransport extends AutoCloseable {
  CompletableFuture<Reply> send(Request request);

  /** One blocking round trip, the transport's fastest way. */
  default Reply call(Request request) throws Exception {
    return send(request).get();
  }

  @Override
  void close();
}
