package io.github.vertxdedup.journal.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.journal.ClaimEntry;
import org.junit.jupiter.api.Test;

/** The claimer text in which format-version-1 CLAIM records carried the claim time, payload hash and remember-until. */
class ClaimerTextV1Test {

  private static final long T0 = 1_700_000_000_000L;

  @Test
  void shouldRoundTripWhatAFormat1ClaimRecordCarriedInItsClaimerText() {
    String text = ClaimerTextV1.encode(T0, 0xCAFEBABEL, T0 + 5_000);
    assertThat(ClaimerTextV1.decode(text)).containsExactly(T0, 0xCAFEBABEL, T0 + 5_000);
    String defaults = ClaimerTextV1.encode(T0, 0, ClaimEntry.NOT_RECORDED);
    assertThat(ClaimerTextV1.decode(defaults)).containsExactly(T0, 0, ClaimEntry.NOT_RECORDED);
    assertThat(ClaimerTextV1.decode("worker-7")).isNull();
  }
}
