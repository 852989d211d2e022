package io.kvs.client;

import io.kvs.core.security.SecurityOptions;
import io.netty.handler.ssl.SslContext;

/**
 * A client's credentials as its transports use them.
 *
 * @param options what the application configured (secret for the fabric bootstrap, ZooKeeper
 *     credentials)
 * @param tcpTls the TLS context of TCP connections, or null for plain TCP
 */
record ClientSecurity(SecurityOptions options, SslContext tcpTls) {
  static final ClientSecurity NONE = new ClientSecurity(SecurityOptions.none(), null);
}
