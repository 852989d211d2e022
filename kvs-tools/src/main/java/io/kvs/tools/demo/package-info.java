/**
 * {@code ./kvs demo}: a local cluster of processes, loaded and exercised through the client, with a
 * report and checks ({@link io.kvs.tools.demo.ClusterDemo}).
 */
package io.kvs.tools.demo;
