package io.kvs.bench.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class WorkloadTest {
  @ParameterizedTest
  @EnumSource(Workload.class)
  void operationsFollowTheWorkloadProportions(Workload workload) {
    int draws = 200_000;
    Map<Operation, Integer> counts = new EnumMap<>(Operation.class);
    SplittableRandom random = new SplittableRandom(workload.ordinal());
    for (int i = 0; i < draws; i++) {
      counts.merge(workload.choose(random.nextDouble()), 1, Integer::sum);
    }
    for (Operation type : Operation.values()) {
      assertThat(counts.getOrDefault(type, 0) / (double) draws)
          .as("%s share of %s", type, workload.id())
          .isCloseTo(workload.proportion(type), within(0.005));
    }
  }

  @Test
  void proportionsAreYcsbs() {
    assertThat(Workload.LOAD_A.proportion(Operation.INSERT)).isEqualTo(1.0);
    assertThat(Workload.RUN_A.proportion(Operation.READ)).isEqualTo(0.5);
    assertThat(Workload.RUN_A.proportion(Operation.UPDATE)).isEqualTo(0.5);
    assertThat(Workload.RUN_B.proportion(Operation.READ)).isEqualTo(0.95);
    assertThat(Workload.RUN_B.proportion(Operation.UPDATE)).isEqualTo(0.05);
    assertThat(Workload.RUN_C.proportion(Operation.READ)).isEqualTo(1.0);
    assertThat(Workload.RUN_D.proportion(Operation.INSERT)).isEqualTo(0.05);
    assertThat(Workload.RUN_D.distribution()).isEqualTo(Workload.Distribution.LATEST);
    assertThat(Workload.RUN_E.proportion(Operation.SCAN)).isEqualTo(0.95);
    assertThat(Workload.RUN_E.proportion(Operation.INSERT)).isEqualTo(0.05);
    for (Workload workload : Workload.values()) {
      double total = 0;
      for (Operation type : Operation.values()) {
        total += workload.proportion(type);
      }
      assertThat(total).isCloseTo(1.0, within(1e-12));
    }
  }

  @Test
  void drawsJustBelowOneStayWithinTheWorkload() {
    assertThat(Workload.RUN_B.choose(Math.nextDown(1.0))).isEqualTo(Operation.UPDATE);
    assertThat(Workload.RUN_C.choose(Math.nextDown(1.0))).isEqualTo(Operation.READ);
  }

  @Test
  void namesParse() {
    assertThat(Workload.parse("loadA")).isEqualTo(Workload.LOAD_A);
    assertThat(Workload.parse("RUNE")).isEqualTo(Workload.RUN_E);
    assertThatThrownBy(() -> Workload.parse("runF")).hasMessageContaining("known: loadA");
  }
}
