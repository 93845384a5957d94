package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.time.ManualClock;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowVerdict;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link WindowUpkeep} on a real Vert.x context: one bounded run at once, the others queued one at a time until the
 * work owed is paid, no second chain while one is queued, nothing while the partition is not ready.
 */
@ExtendWith(VertxExtension.class)
class WindowUpkeepTest {

  private static final long T0 = 1_700_000_000_000L;

  private final ManualClock clock = new ManualClock(T0);
  private Context context;
  private PartitionCore core;
  private long slots;

  @BeforeEach
  void setUp(Vertx vertx) {
    context = vertx.getOrCreateContext();
    // Eight buckets: a bucket step owes one sweep pass over the table, 2^19 slots here, 8 runs, once the table holds
    // a dead entry: one id remembered until the second bucket starts.
    DedupOptions options = new DedupOptions().setWindowMs(8_000).setBucketMs(1_000)
        .setExpectedIdsPerPartition(200_000).validate();
    DedupWindow window = PartitionCore.newWindow(options, clock, null);
    assertThat(window.check(42L, DedupWindow.NO_PAYLOAD_HASH, T0 + 1_000)).isEqualTo(WindowVerdict.ACCEPTED);
    core = onContext(() -> new PartitionCore(options, 0, clock, NoJournal.INSTANCE, new PartitionCounters(), window));
    slots = core.windowStats().tableSlots();
    assertThat(slots).isGreaterThan(4 * WindowUpkeep.SLOTS_PER_RUN);
    clock.advanceMs(1_000);
  }

  private <T> T onContext(Supplier<T> task) {
    CompletableFuture<T> result = new CompletableFuture<>();
    context.runOnContext(v -> result.complete(task.get()));
    try {
      return result.get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** The sweep work the window owes now, read on the context (an upkeep of no slots only reads it). */
  private long owed() {
    return onContext(() -> core.upkeep(0));
  }

  @Test
  void shouldPayOneRunAtOnceAndQueueTheRest() {
    WindowUpkeep upkeep = new WindowUpkeep(context, () -> core);

    long afterFirst = onContext(() -> {
      upkeep.run();
      upkeep.run(); // a chain is queued: no second one
      return core.upkeep(0);
    });

    assertThat(afterFirst).as("owed after the first run").isEqualTo(slots - WindowUpkeep.SLOTS_PER_RUN);
    long owed = afterFirst;
    for (int i = 0; i < 100 && owed > 0; i++) {
      owed = owed();
    }
    assertThat(owed).as("owed once the queued runs are done").isZero();
  }

  @Test
  void shouldDoNothingWhileThePartitionIsNotReady() {
    WindowUpkeep upkeep = new WindowUpkeep(context, () -> null);

    onContext(() -> {
      upkeep.run();
      return null;
    });

    assertThat(owed()).isEqualTo(slots);
  }

  /**
   * The timer is wanted while ids are accepted or sweep work is owed, and not once both stop: the partition then
   * cancels it ({@link WindowUpkeep#runTimed()}).
   */
  @Test
  void shouldWantItsTimerWhileIdsArriveOrWorkIsOwed() {
    WindowUpkeep upkeep = new WindowUpkeep(context, () -> core);

    assertThat(onContext(upkeep::wanted)).as("an id was accepted (and a pass is owed)").isTrue();
    assertThat(onContext(upkeep::wanted)).as("a pass is owed").isTrue();
    long owed = owed();
    for (int i = 0; i < 100 && owed > 0; i++) {
      owed = onContext(() -> {
        upkeep.run();
        return core.upkeep(0);
      });
    }
    assertThat(owed).isZero();
    assertThat(onContext(upkeep::wanted)).as("nothing accepted, nothing owed").isFalse();
    assertThat(onContext(upkeep::runTimed)).as("a timed run of an idle partition").isFalse();
    assertThat(new WindowUpkeep(context, () -> null).wanted()).as("not ready").isFalse();
  }

  @Test
  void shouldRunAFewTimesPerBucket() {
    assertThat(WindowUpkeep.periodMs(1_000)).isEqualTo(250);
    assertThat(WindowUpkeep.periodMs(20)).as("at least 100 ms").isEqualTo(WindowUpkeep.MIN_PERIOD_MS);
    assertThat(WindowUpkeep.periodMs(60_000)).as("at most the tick").isEqualTo(PartitionVerticle.TICK_MS);
  }
}
