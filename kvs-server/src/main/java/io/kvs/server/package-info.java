/**
 * The region server process: the engine, the native request handler behind the client TCP port (the
 * native client door, {@code tcp}) and the fabric transport, the control RPC the master commands it
 * through ({@code control}), the regions it holds as primary or backup at their epochs ({@code
 * regions}: opening a send-index replica as primary promotes it, opening a daughter of a split
 * splits this server's copy of its parent, sealing a region stops it for its split), and its
 * membership in ZooKeeper with the lease that fences its primaries and the watchdog that stops it
 * when a loop of its request path is stuck ({@code membership}). See docs/ARCHITECTURE.md "Region
 * server" and "Failure recovery".
 */
package io.kvs.server;
