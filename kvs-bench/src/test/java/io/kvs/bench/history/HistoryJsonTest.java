package io.kvs.bench.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.bench.history.Operation.Kind;
import io.kvs.bench.history.Operation.Outcome;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryJsonTest {
  @TempDir Path dir;

  @Test
  void aHistoryRoundTripsThroughJsonLines() throws Exception {
    RegisterSimulation simulation = new RegisterSimulation();
    simulation.unknownRate = 0.2;
    simulation.failedRate = 0.1;
    simulation.failedReadRate = 0.1;
    simulation.casShare = 0.2; // CASes with and without an expected value
    History simulated = simulation.generate(5);
    List<Operation> extra =
        List.of(
            new Operation(
                10_000,
                7,
                Kind.PUT,
                Bytes.of(new byte[] {0, -1, '"', '\n'}),
                Bytes.of(new byte[] {-128, 0, 127}),
                -5,
                Long.MAX_VALUE,
                Outcome.UNKNOWN),
            new Operation(
                10_001,
                7,
                Kind.GET,
                Bytes.of(new byte[0]),
                Bytes.of(new byte[0]),
                Long.MIN_VALUE,
                Long.MIN_VALUE + 1,
                Outcome.OK),
            new Operation(10_002, 8, Kind.DELETE, Bytes.utf8("k0"), null, 1, 2, Outcome.OK));
    List<Operation> all = new ArrayList<>(simulated.operations());
    all.addAll(extra);
    History history = new History(all);

    Path file = dir.resolve("target/history/run.jsonl");
    history.writeJsonLines(file);
    History read = History.readJsonLines(file);
    assertThat(read.operations()).isEqualTo(history.operations());
    assertThat(Files.readAllLines(file)).hasSize(history.size());
    assertThat(Files.readAllLines(file).get(0))
        .startsWith("{\"id\":1,\"client\":")
        .contains("\"key\":\"" + history.operations().get(0).key().toBase64() + "\"");

    // The same verdict offline as online.
    LinearizabilityChecker checker = new LinearizabilityChecker();
    assertThat(checker.check(read).result()).isEqualTo(checker.check(history).result());
  }

  @Test
  void aBadLineIsReportedWithItsNumber() throws Exception {
    StringWriter out = new StringWriter();
    new Histories().put(1, "k", "a", 0, 1).build().writeJsonLines(out);
    String text = out + "\n{\"id\":2,\"client\":1,\"kind\":\"GET\"}\n";
    assertThatThrownBy(() -> History.readJsonLines(new StringReader(text)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("line 3")
        .hasMessageContaining("missing field");
  }
}
