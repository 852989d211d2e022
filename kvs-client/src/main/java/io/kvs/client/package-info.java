/**
 * The KVS client library: what an application adds as a Maven dependency to read and write a KVS
 * cluster. It will hold the region map cache, routing by key, bounded retries on NOT_PRIMARY /
 * WRONG_REGION / STALE_EPOCH, and the asynchronous ({@code CompletableFuture}) and blocking APIs
 * over the {@code tcp} and {@code fabric} transports (see docs/ARCHITECTURE.md). Empty until the
 * cluster issue lands.
 */
package io.kvs.client;
