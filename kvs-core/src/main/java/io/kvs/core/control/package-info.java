/**
 * The control RPC between the master (and tools) and region servers: commands that open and close
 * regions at an epoch and list what a server holds, as length-prefixed JSON frames over TCP
 * (docs/PROTOCOL.md, "Control RPC"), one command at a time on connections the client keeps. With a
 * cluster secret every command carries a proof of it bound to a fresh challenge of the server's
 * ({@link io.kvs.core.control.ControlGate}); with TLS both ends present certificates of the cluster
 * CA.
 */
package io.kvs.core.control;
