package io.github.vertxdedup.impl.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.impl.service.LocalPartition;
import io.github.vertxdedup.impl.service.ManualPartitionTimer;
import io.github.vertxdedup.journal.JournalWriteException;
import io.github.vertxdedup.journal.ReplayResult;
import io.github.vertxdedup.journal.RetentionResult;
import io.github.vertxdedup.journal.SnapshotResult;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A partition on the Chronicle journal: a failed journal write (injected) is refused and leaves nothing behind,
 * committed offsets survive restarts and rolls, and SYNC answers only after the group's sync.
 */
@ExtendWith(VertxExtension.class)
class ChroniclePartitionJournalTest {

  private static final long T0 = 1_700_000_000_000L;

  @TempDir
  Path dir;

  private final ManualClock clock = new ManualClock(T0);
  private Vertx vertx;
  private LocalPartition partition;

  @BeforeEach
  void setUp(Vertx vertx) {
    this.vertx = vertx;
  }

  private DedupOptions options(SyncPolicy sync) {
    return new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).setJournalDir(dir.toString())
        .setJournalSync(sync).validate();
  }

  private void deploy(PartitionJournal journal, SyncPolicy sync) {
    partition = await(LocalPartition.deploy(vertx, options(sync), clock, journal, null));
  }

  private ChroniclePartitionJournal chronicle(SyncPolicy sync) {
    DedupOptions o = options(sync);
    return new ChroniclePartitionJournal(vertx, dir.resolve("dedup").resolve("0"), o.getWindowMs(), o.getJournalSync(),
        clock);
  }

  @Test
  void shouldRefuseAnIdWhoseWriteFailedAndAcceptItOnceTheJournalIsReopened() {
    FailingJournal journal = new FailingJournal(chronicle(SyncPolicy.ASYNC));
    deploy(journal, SyncPolicy.ASYNC);
    assertThat(check("a")).isEqualTo("ACCEPTED");

    journal.failNextAccept = true;
    ReplyException refused = failure(request("check", id("b")));
    assertThat(refused.failureCode()).isEqualTo(503);
    assertThat(refused.getMessage()).contains("journal write failed", "no space left");

    // The partition rebuilt its window from the journal: "b" was never written, "a" was.
    assertThat(retryWhileUnavailable("b")).isEqualTo("ACCEPTED");
    assertThat(check("a")).isEqualTo("DUPLICATE");
    assertThat(journal.opens).isEqualTo(2);

    await(partition.undeploy());
    deploy(chronicle(SyncPolicy.ASYNC), SyncPolicy.ASYNC);
    assertThat(check("b")).as("accepted on the retry, so journaled").isEqualTo("DUPLICATE");
  }

  @Test
  void shouldRestoreTheHighestCommittedOffsetAfterRestartsAndRolls() {
    deploy(chronicle(SyncPolicy.ASYNC), SyncPolicy.ASYNC);
    await(partition.commitOffset("orders", 0, 10));
    await(partition.commitOffset("orders", 0, 7)); // a late, lower commit never moves the partition back
    await(partition.commitOffset("orders", 1, 3));
    assertThat(await(partition.committedOffset("orders", 0))).isEqualTo(10);
    assertThatFails(partition.commitOffset("", 0, 1), "topic must not be empty");
    assertThatFails(partition.commitOffset("orders", 0, -1), "offset must be >= 0");

    // Several roll cycles (one minute each for a one-minute window): each new cycle carries the offsets.
    for (int minute = 1; minute <= 4; minute++) {
      clock.advanceMs(61_000);
      assertThat(check("m" + minute)).isEqualTo("ACCEPTED");
    }
    await(partition.undeploy());
    deploy(chronicle(SyncPolicy.ASYNC), SyncPolicy.ASYNC);
    assertThat(await(partition.committedOffset("orders", 0))).isEqualTo(10);
    assertThat(await(partition.committedOffset("orders", 1))).isEqualTo(3);
    assertThat(await(partition.committedOffset("payments", 0))).isEqualTo(-1);
  }

  @Test
  void shouldAnswerEveryRequestOfAGroupAfterItsSyncUnderTheSyncPolicy() {
    deploy(chronicle(SyncPolicy.SYNC), SyncPolicy.SYNC);
    List<Future<Message<Object>>> replies = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      replies.add(request("check", id("s" + i)));
    }
    replies.add(request("check", id("s0")));
    for (int i = 0; i < 500; i++) {
      assertThat(verdict(replies.get(i))).isEqualTo("ACCEPTED");
    }
    assertThat(verdict(replies.get(500))).isEqualTo("DUPLICATE");
    await(partition.undeploy());
    deploy(chronicle(SyncPolicy.SYNC), SyncPolicy.SYNC);
    assertThat(check("s499")).isEqualTo("DUPLICATE");
  }

  @Test
  void shouldDeleteAnIdleJournalsExpiredCycleFileOnTheTimerWithoutAnAppendAndKeepWhatIsLive() throws IOException {
    // A 10-minute window: 5-minute cycle files.
    DedupOptions options = new DedupOptions().setWindowMs(600_000).setBucketMs(10_000).setJournalDir(dir.toString())
        .setJournalSync(SyncPolicy.ASYNC).validate();
    Path files = dir.resolve("dedup").resolve("0");
    ChroniclePartitionJournal journal = new ChroniclePartitionJournal(vertx, files, options.getWindowMs(),
        options.getJournalSync(), clock);
    BlockingQueue<RetentionResult> passes = new LinkedBlockingQueue<>();
    Promise<RetentionResult> trimmed = Promise.promise();
    journal.retentionListener(r -> {
      passes.add(r);
      if (r.deletedCycles() > 0) {
        trimmed.tryComplete(r);
      }
    });
    // The partition's tick fires only when this test fires it.
    ManualPartitionTimer timer = new ManualPartitionTimer();
    partition = await(timer.deploy(vertx, options, clock, journal));

    // The first append of each cycle runs a pass; each is awaited, so the tick below finds none in flight.
    long cycle0 = T0 - Math.floorMod(T0, 300_000); // cycles start at multiples of 5 minutes since the epoch
    await(partition.commitOffset("orders", 0, 10));  // cycle 0
    assertThat(nextPass(passes).deletedCycles()).isZero();
    clock.setMs(cycle0 + 299_000);
    assertThat(check("a")).isEqualTo("ACCEPTED");    // cycle 0; expires 899 s after it began
    clock.setMs(cycle0 + 599_000);
    assertThat(check("b")).isEqualTo("ACCEPTED");    // cycle 1; expires at 1199 s
    assertThat(nextPass(passes).deletedCycles()).isZero();
    clock.setMs(cycle0 + 601_000);
    assertThat(check("c")).isEqualTo("ACCEPTED");    // cycle 2; expires at 1201 s
    assertThat(nextPass(passes).deletedCycles()).isZero();
    assertThat(cycleFiles(files)).hasSize(3);
    assertThat(trimmed.future().isComplete()).as("nothing had expired at any append").isFalse();

    // Idle from here on: no request, so no append. Cycle 0 expires; cycles 1 and 2 still hold live ids.
    clock.setMs(cycle0 + 900_000);
    timer.tick();
    RetentionResult pass = await(trimmed.future()); // run by the partition's periodic timer
    assertThat(pass.deletedCycles()).isEqualTo(1);
    assertThat(pass.keptCycles()).isEqualTo(2);
    assertThat(cycleFiles(files)).hasSize(2);

    // A restart replays what is left: the live ids, and the offset committed in the deleted cycle (every later
    // cycle carries it).
    await(partition.undeploy());
    partition = await(new ManualPartitionTimer().deploy(vertx, options, clock,
        new ChroniclePartitionJournal(vertx, files, options.getWindowMs(), options.getJournalSync(), clock)));
    assertThat(check("b")).isEqualTo("DUPLICATE");
    assertThat(check("c")).isEqualTo("DUPLICATE");
    assertThat(await(partition.committedOffset("orders", 0))).isEqualTo(10);
  }

  /** The next retention pass the journal completes (waits up to 20 s for it). */
  private static RetentionResult nextPass(BlockingQueue<RetentionResult> passes) {
    try {
      RetentionResult r = passes.poll(20, TimeUnit.SECONDS);
      return r != null ? r : fail("no retention pass within 20 s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static List<Path> cycleFiles(Path journalDir) throws IOException {
    try (Stream<Path> s = Files.list(journalDir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".cq4")).toList();
    }
  }

  @Test
  void shouldWriteASnapshotOnTheTimerAndRestartFromItReplayingOnlyTheRecordsAfterIt() throws IOException {
    DedupOptions options = options(SyncPolicy.ASYNC);
    Path files = dir.resolve("dedup").resolve("0");
    ChroniclePartitionJournal journal = new ChroniclePartitionJournal(vertx, files, options.getWindowMs(),
        options.getJournalSync(), clock);
    Promise<SnapshotResult> written = Promise.promise();
    journal.snapshots(written::tryComplete, Long.MAX_VALUE); // none yet: every append checks whether one is due
    ManualPartitionTimer timer = new ManualPartitionTimer();
    partition = await(timer.deploy(vertx, options, clock, journal));

    for (int i = 0; i < 300; i++) {
      assertThat(check("a" + i)).isEqualTo("ACCEPTED");
    }
    String committed = claimToken("committed");
    assertThat(verdict(request("commit", id("committed").put("claimToken", committed)))).isEqualTo("COMMITTED");
    String open = claimToken("open");
    await(partition.commitOffset("orders", 0, 10));
    journal.snapshots(written::tryComplete, 100);
    timer.tick(); // 302 entries since the replay: a snapshot is due
    SnapshotResult snapshot = await(written.future());
    assertThat(snapshot.entries()).as("the ids and the committed claim").isEqualTo(301);
    assertThat(snapshot.claims()).isEqualTo(1);
    for (int i = 0; i < 20; i++) {
      assertThat(check("b" + i)).isEqualTo("ACCEPTED");
    }
    clock.advanceMs(1_000);
    await(partition.undeploy());

    ChroniclePartitionJournal restarted = new ChroniclePartitionJournal(vertx, files, options.getWindowMs(),
        options.getJournalSync(), clock);
    FailingJournal watched = new FailingJournal(restarted);
    ManualPartitionTimer restartedTimer = new ManualPartitionTimer();
    partition = await(restartedTimer.deploy(vertx, options, clock, watched));
    assertThat(watched.reservations)
        .as("the snapshot's entries prepared off the event loop, then restored in place on the partition's context")
        .containsExactly("prepared 301 on a worker", "restored in place on an event loop");
    long tableBytesInPlace = stats().getLong("tableBytes");
    ReplayResult replay = restarted.lastReplay();
    assertThat(replay.snapshotIndex()).isEqualTo(snapshot.position());
    assertThat(replay.snapshotEntries()).isEqualTo(301);
    assertThat(replay.accepts()).as("only the accepts after the snapshot are read from the journal").isEqualTo(20);
    for (int i = 0; i < 300; i++) {
      assertThat(check("a" + i)).isEqualTo("DUPLICATE");
    }
    for (int i = 0; i < 20; i++) {
      assertThat(check("b" + i)).isEqualTo("DUPLICATE");
    }
    assertThat(check("committed")).isEqualTo("DUPLICATE");
    assertThat(check("open")).as("the open claim came back from the snapshot").isEqualTo("IN_FLIGHT");
    assertThat(verdict(request("commit", id("open").put("claimToken", open)))).isEqualTo("COMMITTED");
    assertThat(await(partition.committedOffset("orders", 0))).isEqualTo(10);
    assertThat(check("new")).isEqualTo("ACCEPTED");

    // The table of the snapshot's entries, built on the growth pool, is installed by an upkeep; answers and counts
    // stay as they were.
    long heldInPlace = stats().getLong("held");
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .pollInterval(java.time.Duration.ofMillis(10)).until(() -> {
          restartedTimer.tick();
          return stats().getLong("tableBytes") > tableBytesInPlace;
        });
    for (int i = 0; i < 300; i++) {
      assertThat(check("a" + i)).isEqualTo("DUPLICATE");
    }
    assertThat(check("new")).isEqualTo("DUPLICATE");
    assertThat(stats().getLong("held")).isEqualTo(heldInPlace);
  }

  private JsonObject stats() {
    return (JsonObject) await(request("stats", new JsonObject())).body();
  }

  private String claimToken(String id) {
    JsonObject reply = (JsonObject) await(request("claim", id(id).put("leaseMs", 30_000))).body();
    assertThat(reply.getString("verdict")).isEqualTo("ACCEPTED");
    return reply.getString("claimToken");
  }

  @Test
  void shouldRoundTripAJournalTokenThroughItsClaimTokenText() {
    // The format-1 claimer-text half of this test moved with the code: persistence ClaimerTextV1Test.
    long token = 0x8000_0000_0000_0001L;
    assertThat(ChroniclePartitionJournal.tokenValue(ChroniclePartitionJournal.tokenText(token))).isEqualTo(token);
  }

  // ---------------------------------------------------------------------------------------------------------------

  private String check(String id) {
    return verdict(request("check", id(id)));
  }

  private String retryWhileUnavailable(String id) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      try {
        return check(id);
      } catch (ReplyException e) {
        assertThat(e.failureCode()).as(e.getMessage()).isEqualTo(503);
      }
    }
    return fail("the partition did not answer again within 10 s");
  }

  private Future<Message<Object>> request(String action, JsonObject body) {
    return vertx.eventBus().request("dedup.0", body, new DeliveryOptions().addHeader(DedupAction.HEADER, action));
  }

  private static JsonObject id(String id) {
    return new JsonObject().put("id", id);
  }

  private static String verdict(Future<Message<Object>> reply) {
    return ((JsonObject) await(reply).body()).getString("verdict");
  }

  private static void assertThatFails(Future<?> f, String message) {
    try {
      await(f);
      fail("expected a failure containing " + message);
    } catch (RuntimeException e) {
      assertThat(e).hasMessageContaining(message);
    }
  }

  private static ReplyException failure(Future<?> f) {
    return TestFutures.replyFailure(f, 20);
  }

  private static <T> T await(Future<T> f) {
    return TestFutures.await(f, 20);
  }

  /**
   * The Chronicle journal with one injected append failure: the accept is refused the way a full disk refuses it
   * (the journal rolls back a failed append, so nothing of it is written).
   */
  private static final class FailingJournal implements PartitionJournal {
    private final ChroniclePartitionJournal delegate;
    volatile boolean failNextAccept;
    volatile int opens;
    /**
     * Each recovery's reservation (its entries, on which kind of thread, and whether an entry was restored before),
     * and its restore in place (prepared with how many entries, and where each step ran).
     */
    final List<String> reservations = new java.util.concurrent.CopyOnWriteArrayList<>();

    FailingJournal(ChroniclePartitionJournal delegate) {
      this.delegate = delegate;
    }

    @Override
    public Future<Void> open() {
      opens++;
      return delegate.open();
    }

    @Override
    public Future<Void> recover(RecoveryTarget target) {
      // Forwards every call to the partition's target, noting each reservation and whether an entry came before it.
      java.util.concurrent.atomic.AtomicBoolean restored = new java.util.concurrent.atomic.AtomicBoolean();
      return delegate.recover((RecoveryTarget) java.lang.reflect.Proxy.newProxyInstance(
          RecoveryTarget.class.getClassLoader(), new Class<?>[] {RecoveryTarget.class}, (proxy, method, args) -> {
            String where = io.vertx.core.Context.isOnWorkerThread() ? " on a worker"
                : io.vertx.core.Context.isOnEventLoopThread() ? " on an event loop" : " on " + Thread.currentThread()
                    .getName();
            if (method.getName().equals("prepareRestore")) {
              reservations.add("prepared " + ((io.github.vertxdedup.window.TableOrderedEntries) args[0]).size()
                  + where);
            } else if (method.getName().equals("restoreInPlace")) {
              reservations.add("restored in place" + where);
            }
            if (method.getName().equals("reserve")) {
              reservations.add(args[0] + (io.vertx.core.Context.isOnWorkerThread() ? " on a worker" : " on "
                  + Thread.currentThread().getName()) + (restored.get() ? ", after an entry was restored" : ""));
            } else if (method.getName().startsWith("restore")) {
              restored.set(true);
            }
            try {
              return method.invoke(target, args);
            } catch (java.lang.reflect.InvocationTargetException e) {
              throw e.getCause();
            }
          }));
    }

    @Override
    public Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
        long expiresAtMs) {
      if (failNextAccept) {
        failNextAccept = false;
        return Future.failedFuture(new JournalWriteException("no space left on device (injected)",
            new java.io.IOException("No space left on device")));
      }
      return delegate.accepted(idFingerprint, keyFingerprint, payloadHash, firstSeenMs, expiresAtMs);
    }

    @Override
    public Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
        long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
      return delegate.claimed(idFingerprint, keyFingerprint, payloadHash, claimToken, claimedAtMs, leaseEndMs,
          rememberUntilMs, claimer);
    }

    @Override
    public Future<Void> committed(long idFingerprint, long keyFingerprint, long payloadHash, long committedAtMs,
        long expiresAtMs) {
      return delegate.committed(idFingerprint, keyFingerprint, payloadHash, committedAtMs, expiresAtMs);
    }

    @Override
    public Future<Void> released(long idFingerprint, long keyFingerprint) {
      return delegate.released(idFingerprint, keyFingerprint);
    }

    @Override
    public Future<Void> offsetsCommitted(String topic, int partition, long offset) {
      return delegate.offsetsCommitted(topic, partition, offset);
    }

    @Override
    public void beginBatch() {
      delegate.beginBatch();
    }

    @Override
    public void endBatch() {
      delegate.endBatch();
    }

    @Override
    public Future<Void> close() {
      return delegate.close();
    }
  }
}
