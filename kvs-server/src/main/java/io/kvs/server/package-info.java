/**
 * The region server process: it will register in ZooKeeper, take open/close/promote commands from
 * the master, open regions in the native engine as primary or backup and serve requests from the
 * Netty TCP front end and the fabric transport (see docs/ARCHITECTURE.md). Empty until the cluster
 * issue lands.
 */
package io.kvs.server;
