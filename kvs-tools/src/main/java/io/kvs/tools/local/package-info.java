/**
 * A cluster of separate processes on this machine ({@code ./kvs local start|status|stop}): a
 * ZooKeeper, masters and region servers, each with its own directory and log file under one cluster
 * directory.
 */
package io.kvs.tools.local;
