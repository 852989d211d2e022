package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.control.HeldRegion;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * When the master takes a region's primary to have lost it (it restarted, so its disk may lack
 * writes its backups in sync acknowledged) and which backup it promotes instead ({@link
 * Reconciler#primaryLostIt}, {@link Reconciler#promotable}).
 */
class PrimaryLossTest {
  private static final long ID = 8;

  /** Region 8 at {@code epoch} led by s3, backups s4 (joining) and s2 (in sync). */
  private static RegionDescriptor region(long epoch, RegionState state) {
    return new RegionDescriptor(
        ID,
        new byte[] {(byte) 0xe0},
        new byte[0],
        "s3",
        List.of("s4", "s2"),
        List.of("s4"),
        epoch,
        state);
  }

  private static Map<Long, HeldRegion> holds(long epoch, RegionRole role) {
    return Map.of(ID, new HeldRegion(ID, epoch, role));
  }

  @Test
  void aPrimaryRestartedWhileItsRegionWasReopenedHandsItToABackupInSync() {
    // Reopened at epoch 24 (a stream to s4 failed); s3 was killed and restarted before opening it:
    // listed, holding nothing. s2 still holds it from epoch 23.
    RegionDescriptor opening = region(24, RegionState.OPENING);
    Map<String, Map<Long, HeldRegion>> held =
        Map.of("s3", Map.of(), "s4", Map.of(), "s2", holds(23, RegionRole.BACKUP));
    assertThat(Reconciler.primaryLostIt(opening, held, true)).isTrue();
    assertThat(Reconciler.promotable(opening, held, true)).isEqualTo("s2");
  }

  @Test
  void aPrimaryNotYetAtTheNewEpochOfItsReopenHasNotLostIt() {
    // The usual reopen: s3 still holds it at epoch 23 until the open of epoch 24 reaches it.
    RegionDescriptor opening = region(24, RegionState.OPENING);
    Map<String, Map<Long, HeldRegion>> held =
        Map.of(
            "s3", holds(23, RegionRole.PRIMARY),
            "s4", Map.of(),
            "s2", holds(23, RegionRole.BACKUP));
    assertThat(Reconciler.primaryLostIt(opening, held, true)).isFalse();
  }

  @Test
  void withNoBackupThatStillHoldsItARestartedPrimaryLeadsAgain() {
    // A whole cluster restarted (nobody holds anything) or the in-sync backup restarted too: no one
    // holds more than the primary's disk, and its open is sent again.
    RegionDescriptor opening = region(24, RegionState.OPENING);
    Map<String, Map<Long, HeldRegion>> held =
        Map.of("s3", Map.of(), "s4", Map.of(), "s2", Map.of());
    assertThat(Reconciler.primaryLostIt(opening, held, true)).isFalse();
    assertThat(Reconciler.promotable(opening, held, true)).isNull();
  }

  @Test
  void aPrimaryNotListedThisPassIsNotJudged() {
    RegionDescriptor opening = region(24, RegionState.OPENING);
    Map<String, Map<Long, HeldRegion>> held = Map.of("s2", holds(23, RegionRole.BACKUP));
    assertThat(Reconciler.primaryLostIt(opening, held, true)).isFalse();
  }

  @Test
  void anOpenRegionsPrimaryHoldingItAtAnotherEpochLostIt() {
    RegionDescriptor open = region(24, RegionState.OPEN);
    Map<String, Map<Long, HeldRegion>> held =
        Map.of(
            "s3", holds(22, RegionRole.PRIMARY),
            "s4", holds(24, RegionRole.BACKUP),
            "s2", holds(24, RegionRole.BACKUP));
    assertThat(Reconciler.primaryLostIt(open, held, true)).isTrue();
    assertThat(Reconciler.promotable(open, held, true)).isEqualTo("s2"); // s4 is joining
    Map<String, Map<Long, HeldRegion>> asTheMapSays =
        Map.of(
            "s3", holds(24, RegionRole.PRIMARY),
            "s4", holds(24, RegionRole.BACKUP),
            "s2", holds(24, RegionRole.BACKUP));
    assertThat(Reconciler.primaryLostIt(open, asTheMapSays, true)).isFalse();
  }

  @Test
  void underBuildIndexAnOpeningRegionKeepsItsPrimary() {
    RegionDescriptor opening = region(24, RegionState.OPENING);
    Map<String, Map<Long, HeldRegion>> held =
        Map.of("s3", Map.of(), "s4", Map.of(), "s2", holds(23, RegionRole.BACKUP));
    assertThat(Reconciler.primaryLostIt(opening, held, false)).isFalse();
  }

  @Test
  void aPrimaryOpenedWithABackupJoiningThatTheMapNowCountsInSyncIsOpenedAgain() {
    // s4 joined at epoch 24 and caught up; the map records it in sync. s3 still holds the region
    // as opened, with s4 joining: it syncs every write until it is opened again.
    RegionDescriptor open = region(24, RegionState.OPEN).withInSync(List.of("s4"));
    HeldRegion primary =
        new HeldRegion(
            ID,
            24,
            RegionRole.PRIMARY,
            true,
            false,
            List.of("s4", "s2"),
            List.of(),
            0,
            List.of("s4"),
            0);
    Map<String, Map<Long, HeldRegion>> held =
        Map.of(
            "s3", Map.of(ID, primary),
            "s4", holds(24, RegionRole.BACKUP),
            "s2", holds(24, RegionRole.BACKUP));
    assertThat(Reconciler.needsOpen(open, "s3", held)).isTrue();
    assertThat(Reconciler.needsOpen(open, "s4", held)).isFalse();
    // Not a lost region: the primary holds it at its epoch.
    assertThat(Reconciler.primaryLostIt(open, held, true)).isFalse();
    // Opened again with s4 in sync, or with the map still counting s4 joining: nothing to send.
    HeldRegion reopened =
        new HeldRegion(
            ID,
            24,
            RegionRole.PRIMARY,
            true,
            false,
            List.of("s4", "s2"),
            List.of(),
            0,
            List.of(),
            0);
    assertThat(Reconciler.needsOpen(open, "s3", Map.of("s3", Map.of(ID, reopened)))).isFalse();
    assertThat(Reconciler.needsOpen(region(24, RegionState.OPEN), "s3", held)).isFalse();
  }
}
