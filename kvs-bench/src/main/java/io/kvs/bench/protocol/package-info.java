/**
 * The protocol benchmark: the fabric port's transports (libfabric shm and tcp, and the stream
 * transport over plain TCP) against the client TCP port's native door, one server handler.
 */
package io.kvs.bench.protocol;
