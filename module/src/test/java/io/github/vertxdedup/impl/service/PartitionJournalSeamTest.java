package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.Checkpoint;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The partition against a journal whose futures the test completes by hand and timers the test fires: 503 while
 * recovering, replies held until their write completes (in order), journal failure and the reopen's backoff, counters
 * across a reopen, the pending bound, and the drain on undeploy.
 */
@ExtendWith(VertxExtension.class)
class PartitionJournalSeamTest {

  private static final long T0 = 1_700_000_000_000L;

  private final ManualClock clock = new ManualClock(T0);
  private final HeldJournal journal = new HeldJournal();
  private final ManualPartitionTimer timer = new ManualPartitionTimer();
  private Vertx vertx;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
  }

  private LocalPartition partition;

  /** Deploys the partition on the held journal and the test's timers; {@link #partition} is set at once. */
  private Future<LocalPartition> deploy(int maxPending) {
    DedupOptions options = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).setMaxPending(maxPending)
        .validate();
    PartitionVerticle verticle = new PartitionVerticle(options, 0, clock, journal, null, timer);
    partition = verticle.local();
    return PartitionRequests.deploy(vertx, verticle);
  }

  private LocalPartition deployReady(int maxPending) {
    journal.recovery.complete();
    return await(deploy(maxPending));
  }

  private Future<Message<Object>> request(String action, JsonObject body) {
    return vertx.eventBus().request("dedup.0", body, new DeliveryOptions().addHeader(DedupAction.HEADER, action));
  }

  /** A request answered at once (400): once it is back, every earlier request has been decided. */
  private void barrier() {
    ReplyException e = failure(request("check", new JsonObject()));
    assertThat(e.failureCode()).isEqualTo(400);
  }

  private static JsonObject id(String id) {
    return new JsonObject().put("id", id);
  }

  private static String verdict(Future<Message<Object>> reply) {
    return ((JsonObject) await(reply).body()).getString("verdict");
  }

  @Test
  void shouldAnswer503WhileRecoveringAndAcceptOnlyOnceRecovered() {
    Future<LocalPartition> deployed = deploy(10);
    ReplyException e = retryUntilListening();
    assertThat(e.failureCode()).isEqualTo(503);
    assertThat(e.getMessage()).contains("recovering");
    assertThat(deployed.isComplete()).isFalse();
    assertThat(partition.state()).isEqualTo(PartitionState.RECOVERING);

    journal.recovery.complete();
    await(deployed);
    assertThat(partition.state()).isEqualTo(PartitionState.READY);
    assertThat(verdict(request("check", id("a")))).isEqualTo("ACCEPTED");
  }

  /**
   * The Kafka stores' calls wait for recovery too: an offset commit and the release of a claimer's claims are refused
   * with an {@link IllegalStateException} naming the state while the partition recovers, and work once it is ready.
   */
  @Test
  void shouldRefuseOffsetCommitsAndClaimReleasesWhileRecovering() {
    Future<LocalPartition> deployed = deploy(10);
    assertThat(retryUntilListening().getMessage()).contains("recovering");
    assertThatThrownBy(() -> await(partition.commitOffset("orders", 0, 5)))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("is recovering its window");
    assertThatThrownBy(() -> await(partition.releaseClaimsOf("consumer-a")))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("is recovering its window");
    assertThat(journal.opens.get()).isEqualTo(1);

    journal.recovery.complete();
    assertThat(await(deployed)).isSameAs(partition);
    await(partition.commitOffset("orders", 0, 5));
    assertThat(await(partition.committedOffset("orders", 0))).isEqualTo(5);
    assertThat(await(partition.releaseClaimsOf("consumer-a"))).isZero();
  }

  @Test
  void shouldRestoreWhatTheJournalReplaysBeforeAnswering() {
    journal.replay = target -> {
      target.restore(new RequestDecoder(new DedupOptions().setWindowMs(60_000), 0)
          .decode(id("old"), DedupAction.CHECK, T0, -1).idFp, 0, T0 - 10_000, T0 + 50_000);
      target.memoryBegins(T0 - 30_000);
    };
    deployReady(10);
    assertThat(verdict(request("check", id("old")))).isEqualTo("DUPLICATE");
    // Memory begins 30 s before now: an event from 20 s ago is covered, one from 40 s ago is not.
    assertThat(verdict(request("check", id("b").put("eventTimeMs", T0 - 20_000)))).isEqualTo("ACCEPTED");
    assertThat(verdict(request("check", id("c").put("eventTimeMs", T0 - 40_000)))).isEqualTo("UNKNOWN");
  }

  @Test
  void shouldHoldRepliesUntilTheirJournalWriteCompletesAndSendThemInOrder() {
    deployReady(10);
    journal.hold = true;
    Future<Message<Object>> first = request("check", id("a"));
    Future<Message<Object>> repeat = request("check", id("a"));
    barrier();
    assertThat(first.isComplete()).isFalse();
    assertThat(repeat.isComplete()).isFalse();

    List<String> order = new CopyOnWriteArrayList<>();
    first.onSuccess(m -> order.add("first"));
    repeat.onSuccess(m -> order.add("repeat"));
    journal.writes.get(0).complete();
    assertThat(verdict(first)).isEqualTo("ACCEPTED");
    assertThat(verdict(repeat)).isEqualTo("DUPLICATE");
    assertThat(order).containsExactly("first", "repeat");
  }

  @Test
  void shouldRefuseWaitingRepliesAndReopenTheJournalWhenAWriteFails() {
    deployReady(10);
    journal.hold = true;
    Future<Message<Object>> a = request("check", id("a"));
    Future<Message<Object>> b = request("check", id("b"));
    barrier();
    journal.writes.get(0).fail("disk full");
    ReplyException refused = failure(a);
    assertThat(refused.failureCode()).isEqualTo(503);
    assertThat(refused.getMessage()).contains("journal write failed: disk full");
    assertThat(failure(b).failureCode()).isEqualTo(503);

    // The partition closed the journal, opened it again and rebuilt its window from it: the journal holds neither
    // id, so both are new again.
    journal.hold = false;
    assertThat(retryWhileUnavailable(() -> request("check", id("a")))).isEqualTo("ACCEPTED");
    assertThat(verdict(request("check", id("b")))).isEqualTo("ACCEPTED");
    assertThat(journal.opens.get()).isEqualTo(2);
    assertThat(partition.state()).isEqualTo(PartitionState.READY);
    assertThat(((JsonObject) await(request("stats", null)).body()).getLong("journalReopens")).isEqualTo(1);
    assertThat(timer.waiting()).as("the reopen after a failed write waits for no backoff").isZero();
  }

  @Test
  void shouldKeepCountingAcrossAJournalReopen() {
    deployReady(10);
    assertThat(verdict(request("check", id("x")))).isEqualTo("ACCEPTED");
    assertThat(verdict(request("check", id("x")))).isEqualTo("DUPLICATE");
    journal.failWrites = true;
    assertThat(failure(request("check", id("y"))).failureCode()).isEqualTo(503);
    journal.failWrites = false;
    assertThat(retryWhileUnavailable(() -> request("check", id("y")))).isEqualTo("ACCEPTED");

    // The window was rebuilt from the journal, but the counters are the partition's: they never run backwards.
    JsonObject stats = (JsonObject) await(request("stats", null)).body();
    assertThat(stats.getLong("accepted")).as("x, y refused by the journal, y again").isEqualTo(3);
    assertThat(stats.getLong("duplicates")).isEqualTo(1);
    assertThat(stats.getLong("journalReopens")).isEqualTo(1);
  }

  @Test
  void shouldKeepRefusingWithTheReasonWhileTheJournalCannotBeReopened() {
    deployReady(10);
    journal.failWrites = true;
    journal.failOpens.set(3);
    ReplyException refused = failure(request("check", id("a")));
    assertThat(refused.failureCode()).isEqualTo(503);
    ReplyException meanwhile = failure(request("check", id("a")));
    assertThat(meanwhile.failureCode()).isEqualTo(503);
    assertThat(meanwhile.getMessage()).contains("recovering");
    journal.failWrites = false;
    // Each refused open is retried after a backoff that doubles: the test fires the retries.
    assertThat(timer.fireNext()).isEqualTo(PartitionRecovery.RETRY_MIN_MS);
    assertThat(timer.fireNext()).isEqualTo(2 * PartitionRecovery.RETRY_MIN_MS);
    assertThat(timer.fireNext()).isEqualTo(4 * PartitionRecovery.RETRY_MIN_MS);
    assertThat(retryWhileUnavailable(() -> request("check", id("a")))).isEqualTo("ACCEPTED");
    assertThat(journal.opens.get()).isEqualTo(5); // the first, three refused, the one that worked
    assertThat(timer.waiting()).isZero();
  }

  @Test
  void shouldWaitForEachRetryOfTheReopenAndCapItsBackoff() {
    deployReady(10);
    assertThat(timer.periods).as("the tick and the upkeep, set once ready")
        .containsExactly(PartitionVerticle.TICK_MS, WindowUpkeep.periodMs(1_000));
    journal.failWrites = true;
    journal.failOpens.set(7);
    assertThat(failure(request("check", id("a"))).failureCode()).isEqualTo(503);
    journal.failWrites = false;
    List<Long> delays = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      ManualPartitionTimer.Scheduled retry = timer.next();
      // Until the retry fires nothing is opened: opened at deploy, at the reopen, then once per retry fired.
      assertThat(journal.opens.get()).isEqualTo(2 + i);
      assertThat(failure(request("check", id("a"))).getMessage()).contains("recovering", "disk still full");
      timer.fire(retry);
      delays.add(retry.delayMs());
    }
    assertThat(delays).containsExactly(50L, 100L, 200L, 400L, 800L, 1600L, PartitionRecovery.RETRY_MAX_MS);
    assertThat(retryWhileUnavailable(() -> request("check", id("a")))).isEqualTo("ACCEPTED");
    assertThat(journal.opens.get()).isEqualTo(9);
    assertThat(timer.periods).as("the tick and the upkeep are set once for the deployment").hasSize(2);
  }

  @Test
  void shouldRefuseARequestWhenThePendingQueueIsFullAndRecordNothing() {
    deployReady(2);
    journal.hold = true;
    Future<Message<Object>> a = request("check", id("a"));
    Future<Message<Object>> b = request("check", id("b"));
    ReplyException full = failure(request("check", id("c")));
    assertThat(full.failureCode()).isEqualTo(503);
    assertThat(full.getMessage()).contains("pending queue full", "maxPending=2");
    journal.hold = false;
    journal.writes.forEach(Promise::tryComplete);
    assertThat(verdict(a)).isEqualTo("ACCEPTED");
    assertThat(verdict(b)).isEqualTo("ACCEPTED");
    assertThat(verdict(request("check", id("c")))).isEqualTo("ACCEPTED");
  }

  @Test
  void shouldDrainOnUndeployAnsweringWaitingRequestsOnceTheJournalIsFlushed(VertxTestContext ctx) {
    deployReady(10);
    journal.hold = true;
    journal.holdClose = true;
    List<Future<Message<Object>>> waiting = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      waiting.add(request("check", id("e" + i)));
    }
    barrier();
    Future<Void> undeployed = partition.undeploy();
    await(journal.closeCalled.future());
    // While the journal flushes, a new request is refused at once rather than queued.
    ReplyException stopping = failure(request("check", id("late")));
    assertThat(stopping.failureCode()).isEqualTo(503);
    assertThat(stopping.getMessage()).contains("stopping");
    assertThat(waiting).noneMatch(Future::isComplete);

    Checkpoint answered = ctx.checkpoint(waiting.size());
    for (Future<Message<Object>> w : waiting) {
      w.onComplete(ctx.succeeding(m -> ctx.verify(() -> {
        assertThat(((JsonObject) m.body()).getString("verdict")).isEqualTo("ACCEPTED");
        answered.flag();
      })));
    }
    journal.flush();
    undeployed.onComplete(ctx.succeedingThenComplete());
  }

  @Test
  void shouldFailWaitingRequestsWith503OnUndeployWhenTheirWriteNeverCompletes(VertxTestContext ctx) {
    deployReady(10);
    journal.hold = true;
    Future<Message<Object>> waiting = request("check", id("a"));
    barrier();
    Checkpoint failed = ctx.checkpoint();
    waiting.onComplete(ctx.failing(e -> ctx.verify(() -> {
      assertThat(((ReplyException) e).failureCode()).isEqualTo(503);
      assertThat(e.getMessage()).contains("stopping", "did not complete");
      failed.flag();
    })));
    partition.undeploy().onComplete(ctx.succeedingThenComplete());
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** Repeats a request while it is refused with 503 (the partition reopens its journal with a backoff). */
  private String retryWhileUnavailable(java.util.function.Supplier<Future<Message<Object>>> send) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      try {
        return verdict(send.get());
      } catch (ReplyException e) {
        assertThat(e.failureCode()).as(e.getMessage()).isEqualTo(503);
      }
    }
    return fail("the partition did not answer again within 10 s");
  }

  /** The partition registers its consumer before recovering; wait until a request finds it. */
  private ReplyException retryUntilListening() {
    for (int i = 0; i < 1_000; i++) {
      ReplyException e = failure(request("check", id("a")));
      if (e.failureCode() != -1) {
        return e;
      }
    }
    return fail("the partition never listened");
  }

  private static <T> T await(Future<T> f) {
    return TestFutures.await(f, 10);
  }

  private static ReplyException failure(Future<?> f) {
    return TestFutures.replyFailure(f, 10);
  }

  /** A journal whose futures complete when the test says so. */
  private static final class HeldJournal implements PartitionJournal {

    final Promise<Void> recovery = Promise.promise();
    final List<Promise<Void>> writes = new CopyOnWriteArrayList<>();
    volatile java.util.function.Consumer<RecoveryTarget> replay = target -> { };
    volatile boolean hold;
    volatile boolean holdClose;
    volatile boolean failWrites;
    final java.util.concurrent.atomic.AtomicInteger opens = new java.util.concurrent.atomic.AtomicInteger();
    final java.util.concurrent.atomic.AtomicInteger failOpens = new java.util.concurrent.atomic.AtomicInteger();
    private final Promise<Void> closed = Promise.promise();
    final Promise<Void> closeCalled = Promise.promise();

    @Override
    public Future<Void> open() {
      opens.incrementAndGet();
      if (failOpens.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        return Future.failedFuture(new java.io.IOException("disk still full"));
      }
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> recover(RecoveryTarget target) {
      return recovery.future().onSuccess(v -> replay.accept(target));
    }

    private Future<Void> write() {
      if (failWrites) {
        return Future.failedFuture(new java.io.IOException("disk full"));
      }
      if (!hold) {
        return Future.succeededFuture();
      }
      Promise<Void> p = Promise.promise();
      writes.add(p);
      return p.future();
    }

    @Override
    public Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
        long expiresAtMs) {
      return write();
    }

    @Override
    public Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
        long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
      return write();
    }

    @Override
    public Future<Void> committed(long idFingerprint, long keyFingerprint, long payloadHash, long committedAtMs,
        long expiresAtMs) {
      return write();
    }

    @Override
    public Future<Void> released(long idFingerprint, long keyFingerprint) {
      return write();
    }

    @Override
    public Future<Void> offsetsCommitted(String topic, int partition, long offset) {
      return write();
    }

    /** Completes every outstanding write, then the close. */
    void flush() {
      writes.forEach(Promise::tryComplete);
      closed.tryComplete();
    }

    @Override
    public Future<Void> close() {
      closeCalled.tryComplete();
      if (!holdClose) {
        closed.tryComplete();
      }
      return closed.future();
    }
  }
}
