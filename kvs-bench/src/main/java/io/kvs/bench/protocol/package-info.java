/** The protocol benchmark: fabric shm and tcp against Netty TCP, one server handler. */
package io.kvs.bench.protocol;
