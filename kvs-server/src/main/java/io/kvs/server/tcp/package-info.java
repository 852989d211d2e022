/**
 * The client port ({@link io.kvs.server.tcp.ClientPort}), served by the native client door ({@link
 * io.kvs.server.tcp.NativeClientPort}: shard threads running each request to completion in native
 * code, the default) or by the Netty front end ({@link io.kvs.server.tcp.TcpFrontEnd}: frames
 * handed by the event loop that read them to the native region service, replicated writes' replies
 * through a reply thread; {@code --client-door netty}). Both serve TLS when configured, and both
 * are bounded at every step alike: connections (a cap, beyond which new ones are closed), requests
 * in flight per connection, and replies waiting to be written (a connection whose replies are not
 * read stops being read).
 */
package io.kvs.server.tcp;
