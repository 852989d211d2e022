/**
 * A region server's meters (docs/OPERATIONS.md, "Metrics"): {@link
 * io.kvs.server.metrics.ServerMetrics} reads the native counters (requests, replication, engine)
 * once a second in one JNI call each and exposes them through Micrometer; nothing is pushed from
 * native code into Java.
 */
package io.kvs.server.metrics;
