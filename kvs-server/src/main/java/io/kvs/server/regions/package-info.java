/**
 * The regions a server holds ({@code HostedRegions}): each at the highest epoch it accepted
 * (persisted, {@code EpochStore}), attached to the native service in the role the map gives this
 * server; a send-index replica opened as primary is promoted, a daughter of a split is split from
 * this server's copy of its parent first, a region merged from two is made from this server's
 * copies of both ({@code RegionCopy}), and a primary seals a region for its split ({@code
 * SplitKeys} picks where) or retires one for its merge. See docs/ARCHITECTURE.md "Region server",
 * "Splitting a region" and "Merging regions".
 */
package io.kvs.server.regions;
