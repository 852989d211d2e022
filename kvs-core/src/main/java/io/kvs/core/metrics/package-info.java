/**
 * A process's metrics (docs/OPERATIONS.md, "Metrics"): {@link io.kvs.core.metrics.ProcessMetrics}
 * builds the one registry of a region server or master, exported on JMX (domain {@code kvs}) and as
 * a Prometheus scrape at {@code GET /metrics} of the process's HTTP port, with the JVM's own meters
 * bound. The JMX and Prometheus registries are optional dependencies of kvs-core: only the server
 * and master modules bring them, so the client library needs micrometer-core alone.
 */
package io.kvs.core.metrics;
