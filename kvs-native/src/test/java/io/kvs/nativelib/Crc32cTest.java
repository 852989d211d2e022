package io.kvs.nativelib;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvs.core.InvalidRequestException;
import io.kvs.core.StatusCode;
import io.kvs.nativelib.internal.NativeMethods;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class Crc32cTest {
  @Test
  void publishedVectorsMatch() {
    List<TestVectors.Crc32cVector> vectors = TestVectors.crc32c();
    assertThat(vectors).hasSizeGreaterThanOrEqualTo(7);
    for (TestVectors.Crc32cVector vector : vectors) {
      assertThat(Crc32c.compute(vector.input())).as(vector.name()).isEqualTo(vector.expected());
      ByteBuffer direct = ByteBuffer.allocateDirect(vector.input().length);
      direct.put(vector.input()).flip();
      assertThat(Crc32c.compute(direct)).as(vector.name()).isEqualTo(vector.expected());
    }
  }

  @Test
  void agreesWithTheJdkOnRandomDataAtEveryOffset() {
    Random random = new Random(7);
    byte[] data = new byte[70_000];
    random.nextBytes(data);
    for (int i = 0; i < 500; i++) {
      int offset = random.nextInt(64);
      int length = random.nextInt(data.length - offset);
      assertThat(Crc32c.compute(data, offset, length))
          .as("offset %d length %d", offset, length)
          .isEqualTo(jdk(data, offset, length));
    }
  }

  @Test
  void largeArraysAreChecksummedAcrossCriticalSlices() {
    byte[] data = new byte[3 * 1024 * 1024 + 5];
    new Random(11).nextBytes(data);
    assertThat(Crc32c.compute(data)).isEqualTo(jdk(data, 0, data.length));
  }

  @Test
  void extendEqualsOneShot() {
    byte[] data =
        "one-sided writes need no receive call".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    int whole = Crc32c.compute(data);
    for (int split = 0; split <= data.length; split++) {
      int first = Crc32c.compute(data, 0, split);
      assertThat(Crc32c.extend(first, data, split, data.length - split)).isEqualTo(whole);
    }
  }

  @Test
  void buffersOfEveryKindKeepTheirPosition() {
    byte[] bytes = new byte[1000];
    new Random(3).nextBytes(bytes);
    int expected = jdk(bytes, 100, 800);

    ByteBuffer heap = ByteBuffer.wrap(bytes).position(100).limit(900);
    ByteBuffer direct = ByteBuffer.allocateDirect(1000).put(bytes).position(100).limit(900);
    ByteBuffer readOnly = ByteBuffer.wrap(bytes).asReadOnlyBuffer().position(100).limit(900);
    ByteBuffer slice = ByteBuffer.wrap(bytes, 50, 900).slice().position(50).limit(850);
    for (ByteBuffer buffer : List.of(heap, direct, readOnly, slice)) {
      int position = buffer.position();
      assertThat(Crc32c.compute(buffer)).as(buffer.toString()).isEqualTo(expected);
      assertThat(buffer.position()).isEqualTo(position);
    }
  }

  @Test
  void rangesOutsideTheArrayAreRejectedBeforeNativeCode() {
    byte[] data = new byte[10];
    assertThatThrownBy(() -> Crc32c.compute(data, 5, 6))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> Crc32c.compute(data, -1, 2))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void nativeSideRejectsBadRangesWithATypedException() {
    assertThatThrownBy(() -> NativeMethods.crc32cExtendArray(0, new byte[4], 2, 3))
        .isInstanceOfSatisfying(
            InvalidRequestException.class,
            e -> assertThat(e.status()).isEqualTo(StatusCode.INVALID_ARGUMENT))
        .hasMessageContaining("out of bounds");
    assertThatThrownBy(() -> NativeMethods.crc32cExtendDirect(0, ByteBuffer.allocate(8), 0, 8))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("not a direct buffer");
    assertThatThrownBy(
            () -> NativeMethods.crc32cExtendDirect(0, ByteBuffer.allocateDirect(8), 4, 5))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("out of bounds");
  }

  @Test
  void reportsHardwareAccelerationWhereTheCpuHasIt() {
    boolean cpuHasSse42 = CpuInfo.hasFlag("sse4_2");
    assertThat(Crc32c.isHardwareAccelerated()).isEqualTo(cpuHasSse42);
  }

  private static int jdk(byte[] data, int offset, int length) {
    CRC32C crc = new CRC32C();
    crc.update(data, offset, length);
    return (int) crc.getValue();
  }
}
