/**
 * The client port ({@link io.kvs.server.tcp.ClientPort}), served by the native client door ({@link
 * io.kvs.server.tcp.NativeClientPort}: shard threads running each request to completion in native
 * code, TLS included when configured) with the settings of {@link
 * io.kvs.server.tcp.ClientPortOptions}. It is bounded at every step: connections (a cap, beyond
 * which new ones are closed), requests in flight per connection, and replies waiting to be written
 * (a connection whose replies are not read stops being read).
 */
package io.kvs.server.tcp;
