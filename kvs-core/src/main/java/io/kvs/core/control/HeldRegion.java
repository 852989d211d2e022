package io.kvs.core.control;

import io.kvs.core.cluster.RegionRole;

/** A region a server holds: at which epoch, in which role. */
public record HeldRegion(long regionId, long epoch, RegionRole role) {}
