package io.github.vertxdedup.benchmarks.window;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * The side-by-side compares like with like: every structure gives the same verdicts on a generated stream, the
 * stream has the shape it claims, and every structure forgets an id one window after accepting it.
 */
class ContendersAgreeTest {

  /**
   * A small stream with the reference workload's W and b: 1,000 events/s for 150 s, 10 % recent redeliveries, and 2 %
   * late redeliveries of ids older than W + b, which every structure must accept again.
   */
  private static final Workload SMALL = new Workload(150_000, 1_000, 60_000, 1_000, 0.10, 5_000, 0.02, 61_000, 7);

  private static final EventStream STREAM = EventStream.generate(SMALL);

  @ParameterizedTest
  @EnumSource(Contender.class)
  void shouldGiveTheStreamsExpectedVerdicts(Contender contender) {
    SimulatedClock clock = new SimulatedClock(EventStream.START_MS);
    DedupContender structure = contender.create(SMALL, clock);

    long accepted = Contender.run(STREAM, structure, clock);

    assertThat(accepted).isEqualTo(STREAM.expectedAccepted());
    assertThat(STREAM.size() - accepted).isEqualTo(STREAM.expectedDuplicates());
  }

  @ParameterizedTest
  @EnumSource(Contender.class)
  void shouldHoldOneWindowOfAcceptedIdsAtTheEnd(Contender contender) {
    SimulatedClock clock = new SimulatedClock(EventStream.START_MS);
    DedupContender structure = contender.create(SMALL, clock);

    Contender.run(STREAM, structure, clock);

    // 900 accepted ids/s (fresh ids and late redeliveries) x 60 s; the draws make it vary a little.
    assertThat(structure.held()).isBetween(53_000L, 55_000L);
  }

  @ParameterizedTest
  @EnumSource(Contender.class)
  void shouldDropDuplicateInsideWindowAndAcceptItAgainOneWindowLater(Contender contender) {
    long t0 = 1_000_000_000_000L; // on a bucket boundary
    SimulatedClock clock = new SimulatedClock(t0);
    DedupContender structure = contender.create(SMALL, clock);

    assertThat(structure.firstSeen(7)).isTrue();
    clock.setMs(t0 + 30_000);
    assertThat(structure.firstSeen(7)).isFalse();
    clock.setMs(t0 + 59_999);
    assertThat(structure.firstSeen(7)).isFalse();
    clock.setMs(t0 + 60_000);
    assertThat(structure.firstSeen(7)).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Contender.class)
  void shouldForgetEverythingAfterAnIdleGapOfAWindow(Contender contender) {
    SimulatedClock clock = new SimulatedClock(EventStream.START_MS);
    DedupContender structure = contender.create(SMALL, clock);
    for (long id = 1; id <= 1_000; id++) {
      structure.firstSeen(id);
    }

    clock.setMs(EventStream.START_MS + 5 * 60_000);

    assertThat(structure.firstSeen(500)).isTrue();
    assertThat(structure.held()).isEqualTo(1);
  }

  @Test
  void shouldGenerateTheRequestedMixOfRedeliveries() {
    long lateRedeliveries = STREAM.expectedAccepted() - distinctIds(STREAM);
    assertThat(STREAM.expectedDuplicates()).isBetween(14_000L, 16_000L);
    // Late redeliveries are only possible after the first W + b; about 2 % of the remaining ~89 s.
    assertThat(lateRedeliveries).isBetween(1_400L, 2_200L);
    assertThat(STREAM.fingerprints()).doesNotContain(0L);
    assertThat(STREAM.offsetsMs()).isSorted();
    assertThat(STREAM.offsetsMs()[STREAM.size() - 1]).isEqualTo(149_999);
  }

  @Test
  void shouldGenerateTheSameStreamForTheSameWorkload() {
    EventStream again = EventStream.generate(SMALL);
    assertThat(again.fingerprints()).isEqualTo(STREAM.fingerprints());
    assertThat(again.expectedAccepted()).isEqualTo(STREAM.expectedAccepted());
  }

  @Test
  void shouldDescribeTheSeedWorkload() {
    assertThat(Workload.SEED.events()).isEqualTo(WindowBenchmark.EVENTS);
    assertThat(Workload.SEED.expectedHeldIds()).isEqualTo(5_400_000);
  }

  @Test
  void shouldRejectRedeliverySpanBeyondWhatEveryWindowRemembers() {
    assertThatThrownBy(() -> new Workload(10, 1_000, 60_000, 1_000, 0.1, 59_001, 0, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("redeliverySpanMs must be in [0, windowMs - bucketMs = 59000] but was 59001");
  }

  private static long distinctIds(EventStream stream) {
    Set<Long> ids = new HashSet<>();
    for (long id : stream.fingerprints()) {
      ids.add(id);
    }
    return ids.size();
  }
}
