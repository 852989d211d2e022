/**
 * A cluster of separate processes on this machine ({@code ./kvs local start|status|stop}): a
 * ZooKeeper, masters and region servers, each with its own directory and log file under one cluster
 * directory. {@code status} also prints each master's status page and every process's {@code
 * /metrics} address, and judges regions by what their servers report holding.
 */
package io.kvs.tools.local;
