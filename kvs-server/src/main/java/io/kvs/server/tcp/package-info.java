/**
 * The Netty TCP front end: wire-protocol frames handed by the event loop that read them to the
 * native region service, replies written back on it (replicated writes' replies through a reply
 * thread, when their backups hold them).
 */
package io.kvs.server.tcp;
