/**
 * {@code ./kvs bench elastic}: a local cluster that starts with one region, loaded with a hot key
 * range, splitting and balancing by itself, then joined by a fourth server; measures the regions
 * over time, the time to the first split and to a balanced cluster, throughput around splits and
 * each split's and handover's gap in availability.
 */
package io.kvs.bench.elastic;
