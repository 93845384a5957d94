package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A ready partition runs its window's upkeep on a timer of its own, or on its tick for buckets of 4 s or more: shown
 * by the table's growth, which the upkeep starts ahead of the checks, has built on a worker and installs at a later
 * run (the timers are the test's, fired by it).
 */
@ExtendWith(VertxExtension.class)
class PartitionUpkeepTest {

  private final ManualClock clock = new ManualClock(1_700_000_000_000L);
  private final ManualPartitionTimer timer = new ManualPartitionTimer();

  private JsonObject request(Vertx vertx, String action, JsonObject body) {
    return (JsonObject) TestFutures.await(vertx.eventBus().request("dedup.0", body,
        new DeliveryOptions().addHeader(DedupAction.HEADER, action)), 10).body();
  }

  @Test
  void shouldGrowTheTableAheadOfTheChecksOnItsUpkeepTimer(Vertx vertx) {
    growsAheadOnItsTimers(vertx, 1_000, List.of(PartitionVerticle.TICK_MS, 250L));
  }

  @Test
  void shouldRunTheUpkeepOnTheTickForBucketsOfFourSecondsOrMore(Vertx vertx) {
    growsAheadOnItsTimers(vertx, 4_000, List.of(PartitionVerticle.TICK_MS));
  }

  /**
   * A partition's window is built with its presized table left for later (so that a snapshot restored in place need
   * not wait for it); a recovery that restores nothing in place, here with no journal, presizes it before the
   * partition is ready.
   */
  @Test
  void shouldHaveItsPresizedTableOnceReadyWhenNothingWasRestoredInPlace(Vertx vertx) {
    DedupOptions options = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000)
        .setExpectedIdsPerPartition(100_000).validate();
    TestFutures.await(timer.deploy(vertx, options, clock, NoJournal.INSTANCE), 10);
    // (100,000 + 1/8) x 4/3 slots, rounded up to a power of two, of 20 bytes each (payload hashes are on by default).
    assertThat(request(vertx, "stats", null).getLong("tableBytes")).isEqualTo((1L << 18) * 20);
  }

  /**
   * An idle partition stops its upkeep timer, so that it does not wake the event loop four times a second (buckets of
   * 1 s) for nothing: the first timed run that finds no id accepted since the previous look and no sweep owed
   * cancels the timer, and the tick sets a new one once ids are accepted again.
   */
  @Test
  void shouldStopTheUpkeepTimerWhileIdleAndSetItAgainOnTheTickOnceIdsArrive(Vertx vertx) {
    DedupOptions options = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).validate();
    TestFutures.await(timer.deploy(vertx, options, clock, NoJournal.INSTANCE), 10);
    assertThat(timer.periods).containsExactly(PartitionVerticle.TICK_MS, 250L);
    ManualPartitionTimer.Scheduled first = timer.periodic.get(1);

    timer.fire(first); // idle: nothing accepted, nothing owed
    request(vertx, "stats", null); // queued behind the timer's task: once answered, it has run
    assertThat(timer.isCancelled(first)).as("the idle partition's upkeep timer").isTrue();
    timer.tick();
    request(vertx, "stats", null);
    assertThat(timer.periods).as("no new timer while idle").hasSize(2);

    assertThat(request(vertx, "check", new JsonObject().put("id", "a")).getString("verdict")).isEqualTo("ACCEPTED");
    timer.tick(); // the tick sees the accept: a new upkeep timer
    request(vertx, "stats", null);
    assertThat(timer.periods).containsExactly(PartitionVerticle.TICK_MS, 250L, 250L);
    ManualPartitionTimer.Scheduled second = timer.periodic.get(2);
    assertThat(timer.isCancelled(second)).isFalse();

    timer.fire(second); // nothing new since the tick looked: idle again
    request(vertx, "stats", null);
    assertThat(timer.isCancelled(second)).isTrue();
  }

  /**
   * An idle partition whose entries expire owes sweep work: the tick sets the upkeep timer again for it, although no
   * id was accepted since the timer stopped.
   */
  @Test
  void shouldSetTheUpkeepTimerAgainWhenEntriesExpireWhileIdle(Vertx vertx) {
    DedupOptions options = new DedupOptions().setWindowMs(8_000).setBucketMs(1_000).validate();
    TestFutures.await(timer.deploy(vertx, options, clock, NoJournal.INSTANCE), 10);
    long now = clock.nowMs();
    assertThat(request(vertx, "check", new JsonObject().put("id", "short").put("rememberUntilMs", now + 1_000))
        .getString("verdict")).isEqualTo("ACCEPTED");
    assertThat(request(vertx, "check", new JsonObject().put("id", "long")).getString("verdict"))
        .isEqualTo("ACCEPTED");
    ManualPartitionTimer.Scheduled first = timer.periodic.get(1);
    timer.fire(first); // the accepts: still wanted
    timer.fire(first); // nothing new, nothing owed yet: idle
    request(vertx, "stats", null);
    assertThat(timer.isCancelled(first)).isTrue();

    clock.advanceMs(2_000); // "short" is dead: the bucket steps owe a sweep
    timer.tick();
    request(vertx, "stats", null);
    assertThat(timer.periods).as("a new upkeep timer for the sweep owed").hasSize(3);
    ManualPartitionTimer.Scheduled second = timer.periodic.get(2);
    timer.fire(second); // pays the sweep
    timer.fire(second); // nothing owed any more: idle again
    request(vertx, "stats", null);
    assertThat(timer.isCancelled(second)).isTrue();
    assertThat(request(vertx, "stats", null).getLong("held")).isEqualTo(1);
  }

  /** Deploys a partition with buckets of {@code bucketMs}, fills its table to one id short of the load limit. */
  private void growsAheadOnItsTimers(Vertx vertx, long bucketMs, List<Long> periods) {
    DedupOptions options = new DedupOptions().setWindowMs(60 * bucketMs).setBucketMs(bucketMs).validate();
    TestFutures.await(timer.deploy(vertx, options, clock, NoJournal.INSTANCE), 10);
    assertThat(timer.periods).as("the periodic timers").containsExactlyElementsOf(periods);
    long emptyTable = request(vertx, "stats", null).getLong("tableBytes");
    // The smallest table holds 64 slots, 48 under its load limit: one id short of it.
    for (int i = 0; i < 47; i++) {
      assertThat(request(vertx, "check", new JsonObject().put("id", "id-" + i)).getString("verdict"))
          .isEqualTo("ACCEPTED");
    }
    assertThat(request(vertx, "stats", null).getLong("tableBytes")).isEqualTo(emptyTable);

    timer.tick(); // fires the periodic timers on the partition's context: the upkeep hands the doubling to a worker
    request(vertx, "stats", null); // queued behind the timers' tasks: once answered, they have run

    // A later upkeep installs what the worker built; no check needs room meanwhile (no more ids).
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> {
      timer.tick();
      return request(vertx, "stats", null).getLong("tableBytes") == 2 * emptyTable;
    });
    assertThat(request(vertx, "stats", null).getLong("held")).isEqualTo(47);
    for (int i = 0; i < 47; i++) {
      assertThat(request(vertx, "check", new JsonObject().put("id", "id-" + i)).getString("verdict"))
          .isEqualTo("DUPLICATE");
    }
  }
}
