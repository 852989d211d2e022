/**
 * The protocol benchmark: the fabric port's transports (libfabric shm and tcp, and the stream
 * transport over plain TCP) against Netty TCP, one server handler.
 */
package io.kvs.bench.protocol;
