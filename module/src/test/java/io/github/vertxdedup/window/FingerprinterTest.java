package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Ids to fingerprints: distinct ids stay distinct, scopes separate, text and bytes agree, never 0, never changes. */
class FingerprinterTest {

  private final Fingerprinter orders = Fingerprinter.forScope("orders");

  @Test
  void shouldGiveDistinctFingerprintsToIdsThatShareStringHashCode() {
    assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());
    assertThat(orders.fingerprint("Aa")).isNotEqualTo(orders.fingerprint("BB"));

    String[] sameHashCode = {"AaAa", "BBBB", "AaBB", "BBAa"};
    Set<Long> fingerprints = new HashSet<>();
    for (String id : sameHashCode) {
      assertThat(id.hashCode()).isEqualTo("AaAa".hashCode());
      fingerprints.add(orders.fingerprint(id));
    }
    assertThat(fingerprints).hasSize(4);
  }

  /** Lengths around XXH3's internal cut-offs (16, 128, 240 bytes, one stripe block) and beyond 64. */
  @ParameterizedTest(name = "{0} bytes")
  @ValueSource(ints = {65, 100, 128, 129, 240, 241, 1_024, 1_025, 10_000})
  void shouldTellApartIdsThatDifferOnlyAfterTheir64thByte(int length) {
    byte[] a = new byte[length];
    Arrays.fill(a, (byte) 'x');
    byte[] b = a.clone();
    b[length - 1] = 'y';
    byte[] c = a.clone();
    c[64 + (length - 65) / 2] = 'y'; // the 65th byte or one further on

    assertThat(orders.fingerprint(a)).isNotEqualTo(orders.fingerprint(b));
    assertThat(orders.fingerprint(a)).isNotEqualTo(orders.fingerprint(c));
    if (length > 65) {
      assertThat(orders.fingerprint(b)).isNotEqualTo(orders.fingerprint(c));
    }
    String text = new String(a, StandardCharsets.US_ASCII);
    assertThat(orders.fingerprint(text)).isNotEqualTo(orders.fingerprint(text.substring(0, length - 1) + "y"));
  }

  @Test
  void shouldGiveTheSameIdInTwoScopesTwoFingerprints() {
    Fingerprinter payments = Fingerprinter.forScope("payments");
    assertThat(orders.fingerprint("evt-1")).isNotEqualTo(payments.fingerprint("evt-1"));
    // No concatenation: ("a", "bc") and ("ab", "c") are different pairs.
    assertThat(Fingerprinter.forScope("a").fingerprint("bc")).isNotEqualTo(Fingerprinter.forScope("ab").fingerprint("c"));
    assertThat(Fingerprinter.forScope("").fingerprint("x")).isNotEqualTo(Fingerprinter.forScope("x").fingerprint(""));
    assertThat(Fingerprinter.forScope("orders").fingerprint("evt-1")).isEqualTo(orders.fingerprint("evt-1"));
    assertThat(orders.scope()).isEqualTo("orders");
  }

  @ParameterizedTest(name = "[{index}] \"{0}\"")
  @ValueSource(strings = {"", "order-7781", "é", "日本語のID", "emoji 😀 pair", "\u0000nul", "mixed ü 😀 ascii"})
  void shouldGiveAStringAndItsUtf8BytesTheSameFingerprint(String id) {
    byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
    assertThat(orders.fingerprint(id)).isEqualTo(orders.fingerprint(utf8));

    byte[] framed = new byte[utf8.length + 7];
    Arrays.fill(framed, (byte) '#');
    System.arraycopy(utf8, 0, framed, 3, utf8.length);
    assertThat(orders.fingerprint(framed, 3, utf8.length)).isEqualTo(orders.fingerprint(id));
    assertThat(Fingerprinter.payloadHash(id)).isEqualTo(Fingerprinter.payloadHash(utf8));
  }

  @Property(tries = 2_000)
  void shouldGiveAnyStringAndItsUtf8BytesTheSameNonZeroFingerprint(
      @ForAll @StringLength(max = 300) String id) {
    // Keep the ids that are well-formed UTF-16: only those have a UTF-8 encoding.
    String wellFormed = new String(id.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
    long f = orders.fingerprint(wellFormed);
    assertThat(f).isNotZero().isEqualTo(orders.fingerprint(wellFormed.getBytes(StandardCharsets.UTF_8)));
    assertThat(Fingerprinter.payloadHash(wellFormed)).isNotZero();
  }

  @Test
  void shouldRefuseTextIdsWithUnpairedSurrogates() {
    // Java's UTF-8 encoder writes '?' for an unpaired surrogate, so "a\uD800" would collide with "a?".
    assertThatThrownBy(() -> orders.fingerprint("a\uD800"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id must be well-formed UTF-16 but has an unpaired surrogate at index 1");
    assertThatThrownBy(() -> orders.fingerprint("\uDC00b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at index 0");
    assertThatThrownBy(() -> orders.fingerprint("x\uD83D\uD83D\uDE00"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at index 1");
    assertThatThrownBy(() -> Fingerprinter.payloadHash("{\"note\":\"\uDFFF\"}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("payload must be well-formed UTF-16 but has an unpaired surrogate at index 9");
    assertThat(orders.fingerprint("a?")).isNotZero();
    assertThat(orders.fingerprint("\uD83D\uDE00")).isEqualTo(orders.fingerprint("😀"));
  }

  @Test
  void shouldNeverGiveZero() {
    assertThat(Fingerprinter.nonZero(0)).isEqualTo(Fingerprinter.ZERO_REPLACEMENT).isNotZero();
    assertThat(Fingerprinter.nonZero(1)).isEqualTo(1);
    assertThat(Fingerprinter.nonZero(-1)).isEqualTo(-1);
    for (int i = 0; i < 100_000; i++) {
      assertThat(orders.fingerprint("id-" + i)).isNotZero();
    }
  }

  /**
   * The function is part of the journal format: these values were computed with the reference implementation of
   * XXH3-64 (xxHash 0.8.3), seeded with XXH3-64 of the scope's UTF-8 bytes; payload hashes with seed 0x5DEECE66D.
   * If this test fails, fingerprints in existing journals no longer match.
   */
  @Test
  void shouldKeepTheFingerprintFunctionFixed() {
    assertThat(orders.fingerprint("order-7781")).isEqualTo(4852467746109292526L);
    assertThat(orders.fingerprint("")).isEqualTo(6911837638384333987L);
    assertThat(orders.fingerprint("Aa")).isEqualTo(-192431928098432705L);
    assertThat(orders.fingerprint("x".repeat(300))).isEqualTo(5105075174390026917L);
    assertThat(Fingerprinter.forScope("").fingerprint("")).isEqualTo(4696993233866070003L);
    assertThat(Fingerprinter.forScope("").fingerprint("é日本😀")).isEqualTo(4925278027505681025L);
    assertThat(Fingerprinter.payloadHash("{\"amount\":12}")).isEqualTo(8104852088363970168L);
  }

  @Test
  void shouldRefuseNullsAndRangesOutsideTheArray() {
    assertThatThrownBy(() -> Fingerprinter.forScope(null)).isInstanceOf(NullPointerException.class)
        .hasMessage("scope");
    assertThatThrownBy(() -> orders.fingerprint((String) null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> orders.fingerprint(new byte[4], 2, 3)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> orders.fingerprint(new byte[4], -1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
  }
}
