package io.kvs.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.ClosedException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Region#contentsDigest}: of the live pairs, wherever they are stored. */
class ContentsDigestTest {
  @TempDir Path directory;

  @Test
  void theSamePairsDigestAlikeWhetherInLevelsOrInMemory() {
    try (Engine engine =
        Engine.open(
            directory.resolve("volume"), EngineOptions.builder().l0SizeBytes(1 << 20).build())) {
      Region compacted = engine.createRegion("compacted");
      Region fresh = engine.createRegion("fresh");
      Map<String, byte[]> model = new TreeMap<>();
      Random random = new Random(5);
      for (int i = 0; i < 6000; i++) {
        byte[] key =
            String.format("key%05d", random.nextInt(2000)).getBytes(StandardCharsets.UTF_8);
        if (i % 13 == 0) {
          compacted.delete(key);
          model.remove(new String(key, StandardCharsets.UTF_8));
          continue;
        }
        byte[] value = new byte[new int[] {20, 300, 1500}[i % 3]];
        random.nextBytes(value);
        compacted.put(key, value);
        model.put(new String(key, StandardCharsets.UTF_8), value);
      }
      model.forEach((key, value) -> fresh.put(key.getBytes(StandardCharsets.UTF_8), value));

      ContentsDigest ours = compacted.contentsDigest();
      ContentsDigest theirs = fresh.contentsDigest();
      assertThat(ours.digest()).isEqualTo(theirs.digest());
      assertThat(ours.pairs()).isEqualTo(model.size()).isEqualTo(theirs.pairs());
      assertThat(ours.levels()).isPositive();
      assertThat(ours.levelPairs()).isPositive();
      assertThat(ours.lastLsn()).isGreaterThanOrEqualTo(6000);
      assertThat(ours.asMap()).containsEntry("levelPairs", ours.levelPairs()).hasSize(8);

      fresh.delete("key00001".getBytes(StandardCharsets.UTF_8));
      fresh.put("key00002".getBytes(StandardCharsets.UTF_8), new byte[] {1});
      assertThat(fresh.contentsDigest().digest()).isNotEqualTo(ours.digest());

      compacted.close();
      assertThatThrownBy(compacted::contentsDigest).isInstanceOf(ClosedException.class);
    }
  }
}
