package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.UncoveredPolicy;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LocalPartition#coverFrom}: a rebuild tells the partition from which instant it covers event times, earlier
 * than its journal's first open (the ids were restored from elsewhere) or later (the source lost some); the instant
 * is journaled, so a restart keeps it. An event older than the coverage whose id is not remembered is answered
 * {@code UNKNOWN} (the default {@code uncoveredPolicy}). The clock is a {@link ManualClock}.
 */
@ExtendWith(VertxExtension.class)
class PartitionCoverageTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long MINUTE = 60_000;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(T0);
  private Vertx vertx;
  private LocalPartition partition;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
  }

  private void start() {
    DedupOptions options = new DedupOptions().setWindowMs(10 * MINUTE).setBucketMs(1_000)
        .setJournalDir(dir.toString()).setJournalSync(SyncPolicy.NONE).validate();
    partition = await(LocalPartition.deployJournaled(vertx, options, clock, dir.resolve("dedup").resolve("0"), null));
  }

  private DedupVerdict check(String id, long eventTimeMs) {
    return await(partition.check(new DedupEvent(id).setEventTimeMs(eventTimeMs))).verdict();
  }

  @Test
  void coverFrom_movesTheCoverageAndARestartKeepsIt() {
    start(); // the journal is first opened at T0: the partition covers from T0
    clock.advance(java.time.Duration.ofMinutes(1));
    assertThat(check("before-rebuild", T0 - 2 * MINUTE)).isEqualTo(DedupVerdict.UNKNOWN);

    assertThat(await(partition.coverFrom(T0 - 5 * MINUTE))).isEqualTo(T0 - 5 * MINUTE);
    assertThat(check("after-rebuild", T0 - 2 * MINUTE)).isEqualTo(DedupVerdict.ACCEPTED);
    // Never earlier than the window itself reaches back.
    assertThat(check("older-than-the-window", T0 - 10 * MINUTE)).isEqualTo(DedupVerdict.UNKNOWN);

    await(partition.undeploy());
    start();
    assertThat(check("after-restart", T0 - 2 * MINUTE)).as("kept across a restart").isEqualTo(DedupVerdict.ACCEPTED);

    // Later than what it covered: a source that lost records.
    assertThat(await(partition.coverFrom(T0))).isEqualTo(T0);
    assertThat(check("after-loss", T0 - 2 * MINUTE)).isEqualTo(DedupVerdict.UNKNOWN);
    assertThat(check("after-loss-recent", T0 + 30_000)).isEqualTo(DedupVerdict.ACCEPTED);
  }

  @Test
  void coverFrom_refusesAnInstantAfterNowOrBeforeTheEpoch() {
    start();
    assertThatThrownBy(() -> await(partition.coverFrom(T0 + 1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fromMs must be in 0.." + T0 + " (now) but was " + (T0 + 1));
    assertThatThrownBy(() -> await(partition.coverFrom(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fromMs");
  }

  /**
   * Under {@code uncoveredPolicy=ACCEPT} (the Kafka consumer's) an uncovered event in a {@code checkBatch} is
   * decided with the window's batch check, and its answers and counters are those of single checks of the same
   * events: a new uncovered id is accepted and marked uncovered, its repeat is a duplicate, a covered id is not
   * marked, and a late one (older than the window) is accepted uncovered and counted late.
   */
  @Test
  void checkBatch_underAcceptAnswersUncoveredEventsAsSingleChecksDo() {
    LocalPartition batched = await(LocalPartition.deployInMemory(vertx, acceptingUncovered("batched"), clock, null));
    LocalPartition single = await(LocalPartition.deployInMemory(vertx, acceptingUncovered("single"), clock, null));
    clock.advance(java.time.Duration.ofMinutes(1)); // both cover from T0
    List<DedupEvent> events = List.of(
        new DedupEvent("old").setEventTimeMs(T0 - 2 * MINUTE),
        new DedupEvent("old").setEventTimeMs(T0 - 2 * MINUTE),
        new DedupEvent("new").setEventTimeMs(T0 + 30_000),
        new DedupEvent("late").setEventTimeMs(T0 - 20 * MINUTE),
        new DedupEvent("old-2").setEventTimeMs(T0 - MINUTE));
    List<DedupBatchResult> batch = await(batched.checkBatch(events));
    List<DedupResult> singles = new ArrayList<>();
    for (DedupEvent e : events) {
      singles.add(await(single.check(e)));
    }
    assertThat(batch).extracting(r -> r.result().verdict()).containsExactly(DedupVerdict.ACCEPTED,
        DedupVerdict.DUPLICATE, DedupVerdict.ACCEPTED, DedupVerdict.ACCEPTED, DedupVerdict.ACCEPTED);
    assertThat(batch).extracting(r -> r.result().uncovered()).containsExactly(true, false, false, true, true);
    assertThat(batch).extracting(r -> r.result().verdict())
        .containsExactlyElementsOf(singles.stream().map(DedupResult::verdict).toList());
    assertThat(batch).extracting(r -> r.result().uncovered())
        .containsExactlyElementsOf(singles.stream().map(DedupResult::uncovered).toList());
    JsonObject batchedStats = stats(batched);
    JsonObject singleStats = stats(single);
    assertThat(batchedStats.getLong("uncovered")).isEqualTo(3);
    assertThat(batchedStats.getLong("lateDeliveries")).isEqualTo(1);
    for (String counter : List.of("uncovered", "lateDeliveries", "accepted", "duplicates")) {
      assertThat(batchedStats.getLong(counter)).as(counter).isEqualTo(singleStats.getLong(counter));
    }
  }

  private static DedupOptions acceptingUncovered(String address) {
    return new DedupOptions().setAddress(address).setWindowMs(10 * MINUTE).setBucketMs(1_000)
        .setUncoveredPolicy(UncoveredPolicy.ACCEPT).validate();
  }

  /** The partition's counters, asked over the event bus as a client would ({@code stats}). */
  private JsonObject stats(LocalPartition p) {
    return await(vertx.eventBus().<JsonObject>request(p.address(), null,
        new DeliveryOptions().addHeader("action", "stats")).map(Message::body));
  }

  private static <T> T await(Future<T> f) {
    return TestFutures.await(f, 20);
  }
}
