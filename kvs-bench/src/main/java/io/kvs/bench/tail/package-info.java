/**
 * {@code ./kvs bench tail}: latency percentiles under open-loop load at fixed fractions of the
 * measured peak, on a replicated cluster with compactions running (RStore's measurement).
 */
package io.kvs.bench.tail;
