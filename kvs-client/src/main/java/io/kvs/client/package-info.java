/**
 * The KVS client library: what an application adds as a Maven dependency to read and write a KVS
 * cluster.
 *
 * <p>{@link io.kvs.client.KvsClient} is the entry point: built from a ZooKeeper connect string
 * ({@link io.kvs.client.KvsClient#builder()}), it keeps the cluster's region map in a Curator
 * cache, routes each request to the primary of the region holding its key, retries within an
 * operation timeout when the map is out of date or a server is unavailable (a request whose region
 * the map moves to another primary stops waiting for the old one), and offers put, get, delete,
 * multi-get, scans (across regions, in key order or descending; {@link io.kvs.client.ScanStream}
 * pages through a range of any size as it is consumed), conditional writes (compare-and-set,
 * put-if-absent, delete-if-equals and increments of 8-byte counters, decided atomically by the
 * region's primary; {@link io.kvs.client.CasResult}) and batches ({@link io.kvs.client.Mutation}s:
 * atomic within one region, or grouped by region with each write's {@link
 * io.kvs.client.BatchResult}) both asynchronously ({@code CompletableFuture}) and blocking. Two
 * {@linkplain io.kvs.client.Transport transports}: {@code TCP} (pure Java, the default: plain
 * connections without an I/O thread of their own, TLS ones and, with {@code
 * -Dkvs.client.tcp=netty}, plain ones too over Netty) and {@code FABRIC} (the one-sided libfabric
 * transport of {@code kvs-native}, an optional dependency loaded only when chosen). Errors are
 * {@link io.kvs.core.KvsException}s; a region that stays unavailable yields a {@link
 * io.kvs.client.RegionUnavailableException}; a write that failed says whether it surely did not
 * take effect ({@link io.kvs.client.NotAppliedException}) or may have ({@link
 * io.kvs.client.OutcomeUnknownException}). A put or delete that may have taken effect is never sent
 * again; a conditional write is, under its write id ({@code ConditionalWriteIds}), which the region
 * applies at most once.
 *
 * <p>Everything else in the package is internal: the metadata cache ({@code MetadataCache}), the
 * connections ({@code Connections}, {@code DirectConnection}, {@code NettyConnection}, {@code
 * FabricConnection}) and the operations with their retry loop ({@code Operation}, {@code
 * KeyOperation}, {@code MultiGetOperation}, {@code ScanOperation}, {@code BatchOperation}, {@code
 * BatchWrites}, {@code Backoff}) and the write ids of conditional writes ({@code
 * ConditionalWriteIds}). docs/PROTOCOL.md specifies the requests; docs/ARCHITECTURE.md and
 * DESIGN.md §5 the control plane.
 */
package io.kvs.client;
