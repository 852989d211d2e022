package io.kvs.bench.tail;

import io.kvs.core.cluster.ServerInfo;
import io.kvs.core.control.ControlClient;
import io.kvs.core.control.ControlCommand;
import io.kvs.core.control.ControlReply;
import io.kvs.core.security.SecurityOptions;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;

/**
 * The engine's write stalls on the cluster's primaries so far (control command {@code stats}:
 * {@code primary.stalls}, {@code primary.stallMicros}, summed over the servers): how often, and for
 * how long, a write waited for its region's in-memory level to drain into a compaction. Benchmarks
 * subtract two samples.
 */
record WriteStalls(long stalls, long stallMicros) {
  static WriteStalls take(Collection<ServerInfo> servers, SecurityOptions security)
      throws IOException {
    long stalls = 0;
    long micros = 0;
    try (ControlClient control = new ControlClient(Duration.ofSeconds(10), security)) {
      for (ServerInfo server : List.copyOf(servers)) {
        ControlReply reply =
            control.call(server.host(), server.controlPort(), new ControlCommand.Stats());
        if (!reply.isOk()) {
          throw new IOException("stats of " + server.id() + ": " + reply.message());
        }
        stalls += reply.stats().getOrDefault("primary.stalls", 0L);
        micros += reply.stats().getOrDefault("primary.stallMicros", 0L);
      }
    }
    return new WriteStalls(stalls, micros);
  }

  WriteStalls since(WriteStalls earlier) {
    return new WriteStalls(stalls - earlier.stalls, stallMicros - earlier.stallMicros);
  }
}
