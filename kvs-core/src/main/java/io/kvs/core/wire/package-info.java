/**
 * The wire protocol's request/reply encoding (docs/PROTOCOL.md), shared by every transport: {@link
 * io.kvs.core.wire.Request}, {@link io.kvs.core.wire.Reply} and {@link io.kvs.core.wire.WireCodec}.
 */
package io.kvs.core.wire;
