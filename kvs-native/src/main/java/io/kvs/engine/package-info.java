/**
 * The KVS storage engine, in process: an {@link io.kvs.engine.Engine} is one volume (a file or
 * block device) holding many named {@link io.kvs.engine.Region}s, each one key range's LSM tree
 * with key-value separation. Writes are acknowledged once in the log buffer ({@code sync=false},
 * durable within the flush interval or at {@link io.kvs.engine.Region#sync()}) or once durable
 * ({@code sync=true}).
 *
 * <p>Keys are 1 to {@value io.kvs.engine.Region#MAX_KEY_BYTES} bytes and values up to {@value
 * io.kvs.engine.Region#MAX_VALUE_BYTES} bytes; larger ones fail with an {@link
 * io.kvs.core.InvalidRequestException} of status {@code TOO_LARGE}. Every class is thread-safe.
 */
package io.kvs.engine;
