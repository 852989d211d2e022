/**
 * The regions a server holds ({@code HostedRegions}): each at the highest epoch it accepted
 * (persisted, {@code EpochStore}), attached to the native service in the role the map gives this
 * server; a send-index replica opened as primary is promoted, a daughter of a split is split from
 * this server's copy of its parent first, and a primary seals a region for its split ({@code
 * SplitKeys} picks where). See docs/ARCHITECTURE.md "Region server" and "Splitting a region".
 */
package io.kvs.server.regions;
