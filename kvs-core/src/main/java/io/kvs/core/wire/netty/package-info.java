/** The Netty TCP framing of the wire protocol, for the pure-Java client and the server. */
package io.kvs.core.wire.netty;
