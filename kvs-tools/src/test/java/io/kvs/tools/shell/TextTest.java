package io.kvs.tools.shell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TextTest {
  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void splitsOnBlanksAndKeepsQuotedBlanks() {
    List<byte[]> words = Text.words("  put  key \"hello world\" a\"b c\"d \"\"  ");
    assertThat(words)
        .containsExactly(utf8("put"), utf8("key"), utf8("hello world"), utf8("ab cd"), new byte[0]);
  }

  @Test
  void decodesEscapes() {
    assertThat(Text.words("\\x00\\xff\\x41 \\\\\\\"\\n\\t"))
        .containsExactly(new byte[] {0, (byte) 0xff, 'A'}, new byte[] {'\\', '"', '\n', '\t'});
    assertThat(Text.words("é€😀")).containsExactly(utf8("é€😀"));
  }

  @Test
  void reportsBadInputWithItsColumn() {
    assertThatThrownBy(() -> Text.words("get \"abc"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unterminated quote at column 5");
    assertThatThrownBy(() -> Text.words("get a\\q"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("bad escape '\\q' at column 6");
    assertThatThrownBy(() -> Text.words("get \\x4"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("bad escape '\\x4' at column 5");
    assertThatThrownBy(() -> Text.words("get \\xg1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("bad escape");
  }

  @Test
  void wordKeepsBlanks() {
    assertThat(Text.word("hello world\\x21")).isEqualTo(utf8("hello world!"));
    assertThat(Text.word("")).isEmpty();
  }

  @Test
  void formatsPrintableTextAsIsAndEscapesTheRest() {
    assertThat(Text.format(utf8("abc-1"))).isEqualTo("abc-1");
    assertThat(Text.format(utf8("hello world"))).isEqualTo("\"hello world\"");
    assertThat(Text.format(new byte[0])).isEqualTo("\"\"");
    assertThat(Text.format(utf8("é€😀"))).isEqualTo("é€😀");
    assertThat(Text.format(new byte[] {0, 'a', (byte) 0xff, '\\', '"', '\n'}))
        .isEqualTo("\\x00a\\xff\\\\\\\"\\n");
    // Overlong, surrogate and truncated sequences are not characters.
    assertThat(Text.format(new byte[] {(byte) 0xc0, (byte) 0x80})).isEqualTo("\\xc0\\x80");
    assertThat(Text.format(new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}))
        .isEqualTo("\\xed\\xa0\\x80");
    assertThat(Text.format(new byte[] {(byte) 0xe2, (byte) 0x82})).isEqualTo("\\xe2\\x82");
    // A no-break space would look like a blank.
    assertThat(Text.format(utf8("a\u00a0b"))).isEqualTo("a\\xc2\\xa0b");
  }

  @Test
  void whatIsPrintedReadsBackAsTheSameBytes() {
    Random random = new Random(7);
    for (int i = 0; i < 20_000; i++) {
      byte[] bytes = new byte[random.nextInt(12)];
      random.nextBytes(bytes);
      if (i % 2 == 0) {
        // Mostly text, some of it multi-byte.
        String text = new String(bytes, StandardCharsets.ISO_8859_1) + "é €";
        bytes = utf8(text);
      }
      String printed = Text.format(bytes);
      assertThat(Text.words(printed)).as(printed).hasSize(1);
      assertThat(Text.words(printed).get(0)).as(printed).isEqualTo(bytes);
    }
  }
}
