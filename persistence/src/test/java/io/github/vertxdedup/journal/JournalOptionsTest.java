package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.ManualClock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class JournalOptionsTest {

  private static final long START_MS = 1_700_000_000_000L;

  @Test
  void shouldStartWithTheDocumentedDefaults() {
    JournalOptions o = new JournalOptions();
    assertThat(o.getRollCycle()).isEqualTo(JournalOptions.DEFAULT_ROLL_CYCLE);
    assertThat(o.getSyncPolicy()).isEqualTo(SyncPolicy.ASYNC);
    assertThat(o.getSyncInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(o.getChronicleTimeout()).isEqualTo(Duration.ofMillis(500));
    assertThat(o.getProgressInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(o.getRollSnapshotSource()).isSameAs(RollSnapshotSource.NONE);
  }

  @Test
  void shouldCopyEveryField() {
    RollSnapshotSource source = w -> { };
    ReplayProgressListener listener = (j, p, d) -> { };
    ManualClock clock = new ManualClock(START_MS);
    JournalOptions o = new JournalOptions().setRollCycle(Duration.ofHours(1)).setSyncPolicy(SyncPolicy.SYNC)
        .setSyncInterval(Duration.ofMillis(20)).setChronicleTimeout(Duration.ofSeconds(2))
        .setProgressInterval(Duration.ZERO).setRollSnapshotSource(source).setProgressListener(listener)
        .setClock(clock);
    JournalOptions copy = new JournalOptions(o);
    assertThat(copy.getRollCycle()).isEqualTo(Duration.ofHours(1));
    assertThat(copy.getSyncPolicy()).isEqualTo(SyncPolicy.SYNC);
    assertThat(copy.getSyncInterval()).isEqualTo(Duration.ofMillis(20));
    assertThat(copy.getChronicleTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(copy.getProgressInterval()).isZero();
    assertThat(copy.getRollSnapshotSource()).isSameAs(source);
    assertThat(copy.getProgressListener()).isSameAs(listener);
    assertThat(copy.getClock()).isSameAs(clock);
  }

  @Test
  void shouldRejectOutOfRangeValuesNamingTheFieldAndLimit() {
    JournalOptions o = new JournalOptions();
    assertThatThrownBy(() -> o.setRollCycle(Duration.ofMinutes(7)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rollCycle must be one of [PT1S, PT1M, PT5M,")
        .hasMessageEndingWith("but was PT7M");
    assertThatThrownBy(() -> o.setSyncInterval(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("syncInterval must be in [1ms, PT1H] but was PT0S");
    assertThatThrownBy(() -> o.setChronicleTimeout(Duration.ofMillis(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("chronicleTimeout must be in [PT0.01S, PT1M] but was PT0.005S");
    assertThatThrownBy(() -> o.setProgressInterval(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("progressInterval must be >= 0 but was PT-1S");
    assertThatThrownBy(() -> o.setSyncPolicy(null)).isInstanceOf(NullPointerException.class);
    assertThat(o.getRollCycle()).isEqualTo(JournalOptions.DEFAULT_ROLL_CYCLE);
  }

  @Test
  void shouldChooseTheShortestRollCycleOfAtLeastAQuarterOfTheWindow() {
    assertThat(JournalOptions.rollCycleFor(Duration.ofMinutes(10))).isEqualTo(Duration.ofMinutes(5));
    assertThat(JournalOptions.rollCycleFor(Duration.ofMinutes(20))).isEqualTo(Duration.ofMinutes(5));
    assertThat(JournalOptions.rollCycleFor(Duration.ofMinutes(21))).isEqualTo(Duration.ofMinutes(10));
    assertThat(JournalOptions.rollCycleFor(Duration.ofSeconds(30))).isEqualTo(Duration.ofMinutes(1));
    assertThat(JournalOptions.rollCycleFor(Duration.ofDays(1))).isEqualTo(Duration.ofHours(6));
    assertThat(JournalOptions.rollCycleFor(Duration.ofDays(4))).isEqualTo(Duration.ofDays(1));
    assertThat(JournalOptions.rollCycleFor(Duration.ofDays(5))).isEqualTo(Duration.ofDays(1));
    assertThat(JournalOptions.rollCycleFor(Duration.ofDays(366))).isEqualTo(Duration.ofDays(1));
    assertThat(JournalOptions.supportedRollCycles()).last().isEqualTo(Duration.ofDays(1));
    assertThatThrownBy(() -> JournalOptions.rollCycleFor(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("window must be > 0 but was PT0S");
    assertThat(JournalOptions.supportedRollCycles()).first().isEqualTo(Duration.ofSeconds(1));
  }
}
