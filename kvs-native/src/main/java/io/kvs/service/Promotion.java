package io.kvs.service;

import io.kvs.engine.Region;

/**
 * A promoted replica ({@link RegionService#promote}): the region to attach as primary, what was
 * adopted, and the wall time of each step, so that the time a region was unavailable after a
 * failure can be attributed.
 *
 * @param region the reopened region, to attach as primary
 * @param segments log segments adopted from the replica's copies
 * @param drainMicros waiting for requests in flight on the old region and for its stream to stop
 * @param closeMicros closing the old region (its logs synced), after any other change of it
 * @param adoptMicros making the copies and installed levels the region's own
 * @param openMicros reopening the region, its logs replayed past the levels
 */
public record Promotion(
    Region region,
    long segments,
    long drainMicros,
    long closeMicros,
    long adoptMicros,
    long openMicros) {

  @Override
  public String toString() {
    return String.format(
        "%d segments adopted; drain %.1f ms, close %.1f ms, adopt %.1f ms, open %.1f ms (%s)",
        segments,
        drainMicros / 1e3,
        closeMicros / 1e3,
        adoptMicros / 1e3,
        openMicros / 1e3,
        region.stats().recovery());
  }
}
