package io.kvs.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

class FlagsTest {
  @Test
  void parsesBothFormsAndPositionals() {
    Flags flags =
        Flags.parse(
            new String[] {"start", "--servers", "3", "--mode=none"}, Set.of("servers", "mode"));
    assertThat(flags.getInt("servers", 1)).isEqualTo(3);
    assertThat(flags.get("mode", "x")).isEqualTo("none");
    assertThat(flags.getInt("regions", 32)).isEqualTo(32);
    assertThat(flags.positional()).containsExactly("start");
  }

  @Test
  void typosAndMissingValuesAreErrors() {
    assertThatThrownBy(() -> Flags.parse(new String[] {"--sever", "3"}, Set.of("servers")))
        .hasMessageContaining("unknown option --sever");
    assertThatThrownBy(() -> Flags.parse(new String[] {"--servers"}, Set.of("servers")))
        .hasMessageContaining("needs a value");
    Flags flags = Flags.parse(new String[] {"--servers", "x"}, Set.of("servers"));
    assertThatThrownBy(() -> flags.getInt("servers", 1)).hasMessageContaining("not a number");
    assertThatThrownBy(() -> flags.require("mode")).hasMessageContaining("--mode is required");
  }
}
