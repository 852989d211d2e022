/**
 * The fabric transport carrying the wire protocol: one-sided writes over libfabric
 * (docs/PROTOCOL.md, "Fabric messages": {@code shm}, {@code tcp}, {@code verbs}), or the channel's
 * own frames over plain TCP ({@code stream}, the default for region servers: "Stream frames").
 * {@link io.kvs.fabric.FabricServer} serves engine regions natively; {@link
 * io.kvs.fabric.FabricClient} is the client end, for {@code kvs-client}.
 */
package io.kvs.fabric;
