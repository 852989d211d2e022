/**
 * The Netty TCP framing of the wire protocol, for the pure-Java client; its server side plays a
 * client port in tests (servers are served by the native client door).
 */
package io.kvs.core.wire.netty;
