/**
 * Who may talk to a KVS process: the cluster secret that authenticates the control RPC and the
 * fabric bootstrap (HMAC-SHA256 challenge-response), TLS settings for the client TCP port and the
 * control RPC, ZooKeeper digest credentials, and the command-line flags that configure them
 * (docs/OPERATIONS.md, "Security").
 */
package io.kvs.core.security;
