/**
 * The fabric transport (docs/PROTOCOL.md, "Fabric messages"): one-sided writes over libfabric
 * ({@code shm}, {@code tcp}, {@code verbs}) carrying the wire protocol. {@link
 * io.kvs.fabric.FabricServer} serves engine regions natively; {@link io.kvs.fabric.FabricClient} is
 * the client end, for {@code kvs-client}.
 */
package io.kvs.fabric;
