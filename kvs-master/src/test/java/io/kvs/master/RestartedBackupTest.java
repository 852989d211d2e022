package io.kvs.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvs.core.cluster.RegionDescriptor;
import io.kvs.core.cluster.RegionRole;
import io.kvs.core.cluster.RegionState;
import io.kvs.core.control.HeldRegion;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A backup that refused an open in sync, holding no stream of the region (it restarted before its
 * old session expired), joins again and is never promoted meanwhile ({@link Reconciler#mustRejoin},
 * {@link Reconciler#promotable}). PowerCutIT's failure: every server killed, the master reopened
 * region 1 at epoch 2 led by s1 (dead) with s2 joining and s3 (dead) in sync; s3's restarted
 * process took the open in sync, then s1 restarted and s3 was promoted with a replica lacking
 * acknowledged writes.
 */
class RestartedBackupTest {
  private static final long ID = 1;

  /** Region 1 at {@code epoch} led by s1, backups s2 and s3, {@code joining} of them joining. */
  private static RegionDescriptor region(long epoch, List<String> joining) {
    return new RegionDescriptor(
        ID,
        new byte[0],
        new byte[] {(byte) 0x80},
        "s1",
        List.of("s2", "s3"),
        joining,
        epoch,
        RegionState.OPENING);
  }

  @Test
  void aBackupThatRefusedInSyncRejoinsAtTheEpochItRefused() {
    RegionDescriptor opening = region(2, List.of("s2"));
    assertThat(Reconciler.mustRejoin(opening, 2, Set.of("s3"))).containsExactly("s3");
    assertThat(Reconciler.mustRejoin(opening, 1, Set.of("s3")))
        .as("a refusal at an epoch the region has left")
        .isEmpty();
    assertThat(Reconciler.mustRejoin(opening, 2, Set.of("s2"))).as("already joining").isEmpty();
    RegionDescriptor rejoined = opening.reassigned("s1", opening.backups(), List.of("s2", "s3"));
    assertThat(Reconciler.mustRejoin(rejoined, 2, Set.of("s3"))).isEmpty();
  }

  @Test
  void oncePrimaryRestartsTooNoRestartedBackupIsPromotedAndThePrimaryLeadsAgain() {
    // s3 refused epoch 2 in sync and holds nothing; the region moved to epoch 3 with it joining.
    RegionDescriptor opening = region(3, List.of("s2", "s3"));
    Map<String, Map<Long, HeldRegion>> held =
        Map.of("s1", Map.of(), "s2", Map.of(), "s3", Map.of());
    assertThat(Reconciler.primaryLostIt(opening, held, true)).isFalse();
    assertThat(Reconciler.promotable(opening, held, true)).isNull();
    // Once s3 holds it joining at epoch 3, it is still not promotable.
    Map<String, Map<Long, HeldRegion>> joined =
        Map.of(
            "s1", Map.of(),
            "s2", Map.of(),
            "s3", Map.of(ID, new HeldRegion(ID, 3, RegionRole.BACKUP)));
    assertThat(Reconciler.promotable(opening, joined, true)).isNull();
  }
}
