/**
 * The control RPC between the master (and tools) and region servers: commands that open and close
 * regions at an epoch and list what a server holds, as length-prefixed JSON frames over TCP
 * (docs/PROTOCOL.md, "Control RPC").
 */
package io.kvs.core.control;
