package io.kvs.master.status;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.control.HeldRegion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a region's state means for its data, judged from the map and from what its members report
 * holding (control {@code list}), not from the map alone: a member that does not hold the region at
 * the map's epoch in the role the map gives it does not serve it, whatever the map says.
 *
 * @param health one of {@link #OFFLINE}, {@link #RECOVERING}, {@link #NOT_SERVED}, {@link
 *     #UNDER_REPLICATED}, {@link #UNKNOWN}, {@link #SERVING} (the first that applies)
 * @param notHeldBy members that are not live, or were listed without the region at its epoch in
 *     their role
 * @param notAnswered members that are live but did not answer (nothing is known of them)
 * @param detail a sentence for the operator, empty when serving
 */
public record RegionHealth(
    String health, List<String> notHeldBy, List<String> notAnswered, String detail) {
  /** No live member holds every write: it answers no one. */
  public static final String OFFLINE = "offline";

  /** A new group is being opened (the map says OPENING). */
  public static final String RECOVERING = "recovering";

  /** The map says OPEN, yet some member does not hold it as the map says. */
  public static final String NOT_SERVED = "not-served";

  /** Fewer members than the replication factor, or backups still catching up. */
  public static final String UNDER_REPLICATED = "under-replicated";

  /** The map says OPEN, but some member did not answer: it cannot be confirmed. */
  public static final String UNKNOWN = "unknown";

  /** Every member holds it as the map says, the group whole and in sync. */
  public static final String SERVING = "serving";

  /** Every value of {@code health}, worst first. */
  public static final List<String> ALL =
      List.of(OFFLINE, RECOVERING, NOT_SERVED, UNDER_REPLICATED, UNKNOWN, SERVING);

  public RegionHealth {
    notHeldBy = List.copyOf(notHeldBy);
    notAnswered = List.copyOf(notAnswered);
  }

  /**
   * Judges {@code region}.
   *
   * @param held what each live server reported holding, by server id; null for a live server that
   *     did not answer; servers absent from the map are not live
   * @param replicationFactor the cluster's replication factor
   */
  public static RegionHealth of(
      RegionDescriptor region, Map<String, Map<Long, HeldRegion>> held, int replicationFactor) {
    List<String> notHeldBy = new ArrayList<>();
    List<String> notAnswered = new ArrayList<>();
    for (String member : region.members()) {
      if (!held.containsKey(member)) {
        notHeldBy.add(member); // not live
        continue;
      }
      Map<Long, HeldRegion> regions = held.get(member);
      if (regions == null) {
        notAnswered.add(member);
        continue;
      }
      HeldRegion holds = regions.get(region.id());
      if (holds == null
          || holds.epoch() != region.epoch()
          || holds.role() != region.roleOf(member)) {
        notHeldBy.add(member);
      }
    }
    if (region.state() == RegionState.OFFLINE) {
      return new RegionHealth(OFFLINE, notHeldBy, notAnswered, "no live member holds every write");
    }
    if (region.state() == RegionState.OPENING) {
      return new RegionHealth(
          RECOVERING,
          notHeldBy,
          notAnswered,
          "opening at epoch " + region.epoch() + " on " + region.members());
    }
    if (!notHeldBy.isEmpty() || region.primary().isEmpty()) {
      return new RegionHealth(
          NOT_SERVED,
          notHeldBy,
          notAnswered,
          notHeldBy.isEmpty()
              ? "no primary"
              : "not held at epoch "
                  + region.epoch()
                  + " as the map says by "
                  + String.join(",", notHeldBy));
    }
    List<String> notes = new ArrayList<>();
    if (region.members().size() < replicationFactor) {
      notes.add(region.members().size() + " of " + replicationFactor + " replicas");
    }
    if (!region.joining().isEmpty()) {
      notes.add("catching up " + String.join(",", region.joining()));
    }
    if (!notes.isEmpty()) {
      return new RegionHealth(UNDER_REPLICATED, notHeldBy, notAnswered, String.join("; ", notes));
    }
    if (!notAnswered.isEmpty()) {
      return new RegionHealth(
          UNKNOWN, notHeldBy, notAnswered, "no answer from " + String.join(",", notAnswered));
    }
    return new RegionHealth(SERVING, notHeldBy, notAnswered, "");
  }

  /** Whether the region is under-replicated (whatever else is wrong with it). */
  public static boolean underReplicated(RegionDescriptor region, int replicationFactor) {
    return region.state() != RegionState.OFFLINE
        && (region.members().size() < replicationFactor || !region.joining().isEmpty());
  }
}
