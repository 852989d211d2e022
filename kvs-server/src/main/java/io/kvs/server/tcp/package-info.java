/** The Netty TCP front end: wire-protocol frames answered by the native region service. */
package io.kvs.server.tcp;
