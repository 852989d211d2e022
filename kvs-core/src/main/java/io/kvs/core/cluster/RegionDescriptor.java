package io.kvs.core.cluster;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One region as the region map records it: its key range {@code [start, end)} (an empty end is
 * unbounded), its replica group and the epoch of that group.
 *
 * @param id the region's number, unique in the cluster
 * @param start first key (inclusive); empty for the first region
 * @param end end key (exclusive); empty for the last region
 * @param primary server id of the primary, empty while it has none
 * @param backups server ids of the backups
 * @param joining the backups not known yet to hold every write the region acknowledged (their
 *     primary's catch-up of them may be under way): never promoted
 * @param epoch raised by the master at every change of the replica group; every request carries it
 * @param state where the region is in its lifecycle
 * @param origin for a region split from another or merged from two, until the master records it
 *     {@code OPEN} (every member holds it): what its members make it from ({@link SplitOrigin}: the
 *     parent and sibling; {@link MergeOrigin}: the two regions merged); null otherwise
 */
public record RegionDescriptor(
    long id,
    byte[] start,
    byte[] end,
    String primary,
    List<String> backups,
    List<String> joining,
    long epoch,
    RegionState state,
    RegionOrigin origin) {
  /** A region that was not split from another (or whose members all hold it). */
  public RegionDescriptor(
      long id,
      byte[] start,
      byte[] end,
      String primary,
      List<String> backups,
      List<String> joining,
      long epoch,
      RegionState state) {
    this(id, start, end, primary, backups, joining, epoch, state, null);
  }

  /** A region with every backup in sync. */
  public RegionDescriptor(
      long id,
      byte[] start,
      byte[] end,
      String primary,
      List<String> backups,
      long epoch,
      RegionState state) {
    this(id, start, end, primary, backups, List.of(), epoch, state);
  }

  public RegionDescriptor {
    Objects.requireNonNull(start, "start");
    Objects.requireNonNull(end, "end");
    primary = primary == null ? "" : primary;
    backups = List.copyOf(backups == null ? List.of() : backups);
    joining = List.copyOf(joining == null ? List.of() : joining);
    if (!backups.containsAll(joining)) {
      throw new IllegalArgumentException("region " + id + ": a joining server is no backup");
    }
    Objects.requireNonNull(state, "state");
    if (origin != null && origin.names(id)) {
      throw new IllegalArgumentException("region " + id + " is its own origin: " + origin);
    }
    if (id < 0 || epoch < 0) {
      throw new IllegalArgumentException("negative region id or epoch");
    }
    if (end.length > 0 && Keys.compare(start, end) >= 0) {
      throw new IllegalArgumentException("empty key range in region " + id);
    }
    if (!primary.isEmpty() && backups.contains(primary)) {
      throw new IllegalArgumentException("region " + id + ": primary is also a backup");
    }
  }

  /**
   * Whether {@code key} splits this region into two non-empty ranges: inside it, above its start.
   */
  public boolean splitsAt(byte[] key) {
    return contains(key) && Keys.compare(key, start) > 0;
  }

  /** Whether {@code key} falls in this region's range. */
  public boolean contains(byte[] key) {
    return Keys.inRange(key, start, end);
  }

  /** Whether {@code other} has the same primary and the same backups (in any order). */
  public boolean sameGroupAs(RegionDescriptor other) {
    return primary.equals(other.primary)
        && new java.util.TreeSet<>(backups).equals(new java.util.TreeSet<>(other.backups));
  }

  /**
   * Whether {@code other} is held by the same servers, whichever of them leads: a handover of one's
   * leadership to the other's primary gives both one group.
   */
  public boolean sameMembersAs(RegionDescriptor other) {
    return new java.util.TreeSet<>(members()).equals(new java.util.TreeSet<>(other.members()));
  }

  /** Primary and backups, primary first. */
  public List<String> members() {
    if (primary.isEmpty()) {
      return backups;
    }
    return java.util.stream.Stream.concat(java.util.stream.Stream.of(primary), backups.stream())
        .toList();
  }

  /** The role of {@code serverId} in this region, or null if it is not a member. */
  public RegionRole roleOf(String serverId) {
    if (primary.equals(serverId)) {
      return RegionRole.PRIMARY;
    }
    return backups.contains(serverId) ? RegionRole.BACKUP : null;
  }

  /**
   * This region with another replica group, at the next epoch, opening; the backups in {@code
   * newJoining} are not in sync yet.
   */
  public RegionDescriptor reassigned(
      String newPrimary, List<String> newBackups, List<String> newJoining) {
    return new RegionDescriptor(
        id, start, end, newPrimary, newBackups, newJoining, epoch + 1, RegionState.OPENING, origin);
  }

  /** This region with the same replica group, at the next epoch, opening. */
  public RegionDescriptor reassigned(String newPrimary, List<String> newBackups) {
    List<String> stillJoining = joining.stream().filter(newBackups::contains).toList();
    return reassigned(newPrimary, newBackups, stillJoining);
  }

  /** This region, same group, at {@code newEpoch} (above its own), opening. */
  public RegionDescriptor atEpoch(long newEpoch) {
    if (newEpoch <= epoch) {
      throw new IllegalArgumentException("epoch " + newEpoch + " is not above " + epoch);
    }
    return new RegionDescriptor(
        id, start, end, primary, backups, joining, newEpoch, RegionState.OPENING, origin);
  }

  /**
   * This region in {@code newState}, same group and epoch; {@code OPEN} forgets the split origin
   * (every member holds the region).
   */
  public RegionDescriptor withState(RegionState newState) {
    return new RegionDescriptor(
        id,
        start,
        end,
        primary,
        backups,
        joining,
        epoch,
        newState,
        newState == RegionState.OPEN ? null : origin);
  }

  /** This region with every backup in sync, same group and epoch. */
  public RegionDescriptor withBackupsInSync() {
    return new RegionDescriptor(id, start, end, primary, backups, List.of(), epoch, state, origin);
  }

  /**
   * The two daughters of splitting this region at {@code key} (strictly inside its range): ids
   * {@code lowerId} and {@code lowerId + 1}, the same group at the next epoch, opening, every
   * backup joining if {@code backupsJoin} (send-index: their replicas, split in place, lack what
   * the primary's split merged into its levels until their streams catch up).
   */
  public List<RegionDescriptor> split(byte[] key, long lowerId, boolean backupsJoin) {
    if (!splitsAt(key)) {
      throw new IllegalArgumentException(
          "split key " + Keys.print(key) + " is not inside region " + id + " " + rangeText());
    }
    List<String> newJoining = backupsJoin ? backups : joining;
    return List.of(
        new RegionDescriptor(
            lowerId,
            start,
            key,
            primary,
            backups,
            newJoining,
            epoch + 1,
            RegionState.OPENING,
            new SplitOrigin(id, lowerId + 1)),
        new RegionDescriptor(
            lowerId + 1,
            key,
            end,
            primary,
            backups,
            newJoining,
            epoch + 1,
            RegionState.OPENING,
            new SplitOrigin(id, lowerId)));
  }

  /** The key a daughter's members split its parent at (null for a region not split). */
  public byte[] splitKey() {
    if (!(origin instanceof SplitOrigin split)) {
      return null;
    }
    return id < split.sibling() ? end : start;
  }

  /**
   * The region of merging this one with {@code right}, its neighbour above (whose range starts
   * where this one's ends, with the same replica group): id {@code mergedId}, both ranges, the
   * group at the next epoch above both, opening, every backup joining if {@code backupsJoin} (their
   * copies are not merged in place).
   */
  public RegionDescriptor merge(RegionDescriptor right, long mergedId, boolean backupsJoin) {
    if (end.length == 0 || !Arrays.equals(end, right.start)) {
      throw new IllegalArgumentException(
          "region " + right.id + " " + right.rangeText() + " does not follow " + this);
    }
    if (!sameGroupAs(right)) {
      throw new IllegalArgumentException(
          "regions " + id + " and " + right.id + " have different replica groups");
    }
    List<String> newJoining = backupsJoin ? backups : List.of();
    return new RegionDescriptor(
        mergedId,
        start,
        right.end,
        primary,
        backups,
        newJoining,
        Math.max(epoch, right.epoch) + 1,
        RegionState.OPENING,
        new MergeOrigin(id, right.id));
  }

  /** This region with {@code inSync} no longer joining, same group and epoch. */
  public RegionDescriptor withInSync(List<String> inSync) {
    List<String> stillJoining =
        joining.stream().filter(backup -> !inSync.contains(backup)).toList();
    return new RegionDescriptor(
        id, start, end, primary, backups, stillJoining, epoch, state, origin);
  }

  /** The backups that hold every write the region acknowledged. */
  public List<String> backupsInSync() {
    return backups.stream().filter(backup -> !joining.contains(backup)).toList();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof RegionDescriptor r
        && id == r.id
        && epoch == r.epoch
        && Arrays.equals(start, r.start)
        && Arrays.equals(end, r.end)
        && primary.equals(r.primary)
        && backups.equals(r.backups)
        && joining.equals(r.joining)
        && state == r.state
        && java.util.Objects.equals(origin, r.origin);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, epoch, Arrays.hashCode(start), Arrays.hashCode(end), primary, backups);
  }

  /** The key range for people: {@code [start, end)}, an unbounded end as {@code +inf}. */
  public String rangeText() {
    return "[" + Keys.print(start) + ", " + (end.length == 0 ? "+inf" : Keys.print(end)) + ")";
  }

  @Override
  public String toString() {
    return "region "
        + id
        + " "
        + rangeText()
        + " epoch "
        + epoch
        + " "
        + state
        + " primary "
        + (primary.isEmpty() ? "-" : primary)
        + " backups "
        + backups
        + (joining.isEmpty() ? "" : " joining " + joining)
        + (origin instanceof SplitOrigin split ? " split from " + split.parent() : "")
        + (origin instanceof MergeOrigin merge
            ? " merged from " + merge.left() + " and " + merge.right()
            : "");
  }
}
