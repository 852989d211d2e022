/**
 * The Netty TCP front end: wire-protocol frames handed by the event loop that read them to the
 * native region service, replies written back on it (replicated writes' replies through a reply
 * thread, when their backups hold them). Bounded at every step: connections (a cap, beyond which
 * new ones are closed), requests in flight per connection, and replies waiting to be written (a
 * connection whose replies are not read stops being read).
 */
package io.kvs.server.tcp;
