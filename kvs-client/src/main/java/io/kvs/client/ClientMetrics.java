package io.kvs.client;

import io.kvs.core.ClosedException;
import io.kvs.core.InvalidRequestException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A client's meters, in the registry the application passed to {@link
 * KvsClientBuilder#meterRegistry} (docs/OPERATIONS.md, "Metrics"); without one, {@link #NONE} costs
 * a null check per operation.
 *
 * <ul>
 *   <li>{@code kvs.client.operations} (timer; tags {@code operation}: put, get, delete, scan,
 *       multi-get; {@code outcome}: ok, not_applied, outcome_unknown, region_unavailable, invalid,
 *       closed, error): operations completed, from the call to the result, retries included;
 *   <li>{@code kvs.client.retries} (counter; tags {@code operation}, {@code action}: refresh,
 *       reconnect, back_off): rounds retried, by what the client did about them.
 * </ul>
 *
 * Thread-safe.
 */
final class ClientMetrics {
  static final ClientMetrics NONE = new ClientMetrics(null);

  private final MeterRegistry registry;
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();
  private final Map<String, Counter> retries = new ConcurrentHashMap<>();

  ClientMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** When an operation begins: a time to pass to {@link #completed}, 0 without a registry. */
  long begin() {
    return registry == null ? 0 : System.nanoTime();
  }

  /** An operation that began at {@code begun} completed, failing with {@code error} if not null. */
  void completed(String operation, long begun, Throwable error) {
    if (registry == null) {
      return;
    }
    String outcome = outcome(error);
    timers
        .computeIfAbsent(
            operation + ' ' + outcome,
            key ->
                Timer.builder("kvs.client.operations")
                    .description("client operations completed, retries included")
                    .tag("operation", operation)
                    .tag("outcome", outcome)
                    .register(registry))
        .record(System.nanoTime() - begun, TimeUnit.NANOSECONDS);
  }

  /** A round of {@code operation} is retried by {@code action}. */
  void retried(String operation, Problem.Action action) {
    if (registry == null) {
      return;
    }
    String name = action.name().toLowerCase(Locale.ROOT);
    retries
        .computeIfAbsent(
            operation + ' ' + name,
            key ->
                Counter.builder("kvs.client.retries")
                    .description("client request rounds retried, by what the client did")
                    .tag("operation", operation)
                    .tag("action", name)
                    .register(registry))
        .increment();
  }

  /** A bounded name for how an operation ended. */
  static String outcome(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause == null) {
      return "ok";
    } else if (cause instanceof OutcomeUnknownException) {
      return "outcome_unknown";
    } else if (cause instanceof RegionUnavailableException) {
      return "region_unavailable";
    } else if (cause instanceof NotAppliedException) {
      return "not_applied";
    } else if (cause instanceof InvalidRequestException) {
      return "invalid";
    } else if (cause instanceof ClosedException) {
      return "closed";
    }
    return "error";
  }
}
