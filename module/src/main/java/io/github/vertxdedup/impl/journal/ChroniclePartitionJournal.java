package io.github.vertxdedup.impl.journal;

import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.ReplayResult;
import io.github.vertxdedup.journal.RetentionResult;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.journal.internal.CarriedState;
import io.github.vertxdedup.journal.internal.JournalLayout;
import io.github.vertxdedup.journal.internal.Recovery;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable {@link PartitionJournal}: one Chronicle Queue {@link Journal} per partition, in
 * {@code <journalDir>/<address>/<partition>}, so that a restart rebuilds the partition's window instead of
 * forgetting it. This class is its lifecycle (open, recover, close); the writes are {@link JournalAppends}' (with
 * {@link GroupCommit} under {@link SyncPolicy#SYNC}), the deletion of expired cycle files {@link RetentionSchedule}'s.
 *
 * <h2>Threads</h2>
 * Every method is called on the partition's event loop and none blocks it: {@link Journal#open},
 * {@link Journal#replay}, {@link Journal#sync}, {@link Journal#deleteExpiredCycles} and {@link Journal#close} run
 * in {@code executeBlocking} on a worker and complete on the partition's context. Appends run on the event loop
 * ({@link JournalAppends}): each writes into the memory-mapped queue file and returns without waiting for the disk.
 *
 * <h2>Recovery</h2>
 * {@link #recover} replays the journal on a worker and hands the live entries back to the partition's context in
 * chunks ({@link RecoveryHandOff}: bounded, so the replay and the window's rebuild overlap on two cores and memory
 * stays bounded). What the records mean (expired entries skipped, claims matched with their commit or release, a
 * claim left open coming back in flight until its lease ends, the highest offset per topic-partition) is
 * {@link Recovery}'s, in {@code persistence/}; this class only schedules it and hands its results to the partition.
 *
 * <p>Journals written before format version 2 (0.1.0-SNAPSHOT) have {@code CLAIM} records without the columns of
 * {@link io.github.vertxdedup.journal.ClaimEntry}: the service then stored the claim time, payload hash and
 * remember-until as text in the record's claimer column ({@link io.github.vertxdedup.journal.internal.ClaimerTextV1}).
 * Replay still reads them; such a claim has no claimer, so it is left to its lease. A roll snapshot writes it again
 * in the new layout.
 *
 * <h2>Roll snapshots and retention</h2>
 * {@link CarriedState} keeps a copy of the open claims and committed offsets (see {@link JournalAppends}), which the
 * first append of each roll cycle writes again into the new cycle, so that old cycles can go once their accepts have
 * expired. {@link #retain} deletes them ({@link RetentionSchedule}) at most once per roll cycle: on the first append
 * in it, or on the partition's periodic timer when nothing is appended (an idle partition's expired files go too).
 *
 * <p>Not thread-safe: confined to the partition's event loop, like the partition.
 */
public final class ChroniclePartitionJournal implements PartitionJournal {

  private static final Logger LOG = LoggerFactory.getLogger(ChroniclePartitionJournal.class);
  private static final Future<Void> DONE = Future.succeededFuture();

  private final Vertx vertx;
  private final Path dir;
  private final DedupClock clock;
  private final long windowMs;
  private final SyncPolicy policy;
  private final Duration rollCycle;
  private final CarriedState carried;
  private final JournalAppends appends;
  private final RetentionSchedule retention;
  private final SnapshotSchedule snapshots;

  private Context context;
  private Journal journal;
  private boolean closing;
  private Future<?> opening;
  private Future<?> recovering;
  private Future<Void> closed;
  private volatile boolean abortReplay;
  private ReplayResult lastReplay;
  /**
   * When this partition's journal was first opened, or from when a rebuild made it whole
   * ({@link JournalLayout#memoryBegan}); written by open and {@link #memoryBegins}, read by recover.
   */
  private volatile long memoryBeganMs = Recovery.NO_MEMORY;

  /**
   * @param vertx the Vert.x instance of the partition
   * @param dir this partition's journal directory, {@code <journalDir>/<address>/<partition>}
   * @param windowMs the service's window in milliseconds ({@code windowMs}): how long a record matters to recovery,
   *     and the journal's roll cycle
   * @param sync the service's {@code journalSync} policy
   * @param clock the partition's clock; the journal's records carry its instants, and its roll cycles follow it
   * @throws IllegalArgumentException if {@code windowMs} is not positive
   */
  public ChroniclePartitionJournal(Vertx vertx, Path dir, long windowMs, SyncPolicy sync, DedupClock clock) {
    this(vertx, dir, windowMs, sync, clock, io.github.vertxdedup.DedupOptions.DEFAULT_JOURNAL_SNAPSHOT_ENTRIES);
  }

  /**
   * @param vertx the Vert.x instance of the partition
   * @param dir this partition's journal directory, {@code <journalDir>/<address>/<partition>}
   * @param windowMs the service's window in milliseconds ({@code windowMs}): how long a record matters to recovery,
   *     and the journal's roll cycle
   * @param sync the service's {@code journalSync} policy
   * @param clock the partition's clock; the journal's records carry its instants, and its roll cycles follow it
   * @param snapshotEntries the service's {@code journalSnapshotEntries}: the smallest journal tail after the newest
   *     window snapshot that makes the next one due ({@link SnapshotSchedule}); 0 writes none
   * @throws IllegalArgumentException if {@code windowMs} is not positive or {@code snapshotEntries} negative
   */
  public ChroniclePartitionJournal(Vertx vertx, Path dir, long windowMs, SyncPolicy sync, DedupClock clock,
      long snapshotEntries) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.dir = Objects.requireNonNull(dir, "dir");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (windowMs <= 0) {
      throw new IllegalArgumentException("windowMs must be > 0 but was " + windowMs);
    }
    this.windowMs = windowMs;
    this.policy = Objects.requireNonNull(sync, "sync");
    this.rollCycle = JournalOptions.rollCycleFor(Duration.ofMillis(windowMs));
    this.carried = new CarriedState(clock);
    this.appends = new JournalAppends(dir, policy, carried, () -> closing ? null : journal, this::retain);
    this.retention = new RetentionSchedule(dir, clock, rollCycle.toMillis());
    if (snapshotEntries < 0) {
      throw new IllegalArgumentException("snapshotEntries must be >= 0 but was " + snapshotEntries);
    }
    this.snapshots = new SnapshotSchedule(dir, clock, windowMs, snapshotEntries);
  }

  /** @return the journal directory of this partition */
  public Path directory() {
    return dir;
  }

  // ------------------------------------------------------------------------------------------------- lifecycle

  @Override
  public Future<Void> open() {
    if (context == null) {
      context = vertx.getOrCreateContext();
      appends.bind(context);
    }
    if (journal != null || opening != null || closing) {
      return Future.failedFuture(new IllegalStateException("journal " + dir + " is already open (or closing)"));
    }
    abortReplay = false;
    JournalOptions jo = new JournalOptions()
        .setClock(clock)
        .setRollCycle(rollCycle)
        .setSyncPolicy(policy)
        .setRollSnapshotSource(carried);
    Future<Void> f = context.executeBlocking(() -> {
      Journal j = Journal.open(dir, jo);
      try {
        memoryBeganMs = JournalLayout.memoryBegan(dir, clock.nowMs());
      } catch (RuntimeException e) {
        j.close();
        throw e;
      }
      return j;
    }, false).map(j -> {
      journal = j;
      retention.reset();
      return (Void) null;
    });
    opening = f;
    f.onComplete(ar -> opening = null);
    return f;
  }

  @Override
  public Future<Void> recover(RecoveryTarget target) {
    Objects.requireNonNull(target, "target");
    Journal j = journal;
    if (j == null) {
      return Future.failedFuture(new IllegalStateException("journal " + dir + " is not open"));
    }
    Promise<Void> done = Promise.promise();
    RecoveryHandOff replayer = new RecoveryHandOff(context, dir, target, clock.nowMs(), windowMs,
        () -> abortReplay);
    Future<ReplayResult> replay = context.executeBlocking(() -> replayer.run(j), false);
    recovering = done.future();
    replay.onComplete(ar -> {
      // Every chunk was queued on this context before the replay returned, so all of them have run by now.
      recovering = null;
      Throwable failure = replayer.failure != null ? replayer.failure : ar.cause();
      if (failure == null && abortReplay) {
        failure = new IllegalStateException("journal " + dir + " was closed during recovery");
      }
      if (failure != null) {
        done.fail(failure);
        return;
      }
      try {
        replayer.finish(clock.nowMs(), memoryBeganMs, carried);
      } catch (RuntimeException e) {
        done.fail(e);
        return;
      }
      ReplayResult r = ar.result();
      lastReplay = r;
      // DEBUG: the partition logs its readiness (at INFO, or its owner does) with the entries it holds.
      LOG.debug("journal {}: recovered {} live entries ({} of them read in place from the snapshot), {} open claims "
          + "and {} offsets from {} records ({} torn) after a snapshot of {} entries at index {} in {} ms", dir,
          replayer.restored + replayer.restoredInPlace, replayer.restoredInPlace, replayer.claimsRestored,
          carried.offsetCount(), r.recordsRead(), r.tornRecords(), r.snapshotEntries(),
          Long.toHexString(r.snapshotIndex()), r.elapsed().toMillis());
      done.complete();
    });
    return done.future();
  }

  @Override
  public Future<Void> memoryBegins(long fromMs) {
    if (fromMs < 0) {
      return Future.failedFuture(new IllegalArgumentException("fromMs must be >= 0 but was " + fromMs));
    }
    Context c = context != null ? context : vertx.getOrCreateContext();
    return c.executeBlocking(() -> {
      JournalLayout.memoryBegins(dir, fromMs);
      memoryBeganMs = fromMs;
      return null;
    }, false);
  }

  @Override
  public Future<Void> close() {
    if (closed != null) {
      return closed;
    }
    if (context == null) {
      return DONE;
    }
    closing = true;
    abortReplay = true;
    List<Future<?>> busy = new ArrayList<>(5);
    for (Future<?> f : List.of(opt(opening), opt(recovering), opt(appends.syncInFlight()), opt(retention.inFlight()),
        opt(snapshots.inFlight()))) {
      if (f != DONE) {
        busy.add(f);
      }
    }
    Promise<Void> p = Promise.promise();
    closed = p.future();
    Future.join(busy).onComplete(ignored -> context.runOnContext(v -> finishClose(p)));
    return closed;
  }

  private static Future<?> opt(Future<?> f) {
    return f == null ? DONE : f;
  }

  private void finishClose(Promise<Void> p) {
    Journal j = journal;
    appends.flush(j).transform(ignored -> j == null ? DONE : context.<Void>executeBlocking(() -> {
      j.close();
      return null;
    }, false)).onComplete(ar -> {
      journal = null;
      carried.clear();
      appends.clear();
      closing = false;
      closed = null;
      if (ar.failed()) {
        p.fail(ar.cause());
      } else {
        p.complete();
      }
    });
  }

  // ---------------------------------------------------------------------------------------------------- writes

  @Override
  public Future<Void> accepted(long idFingerprint, long keyFingerprint, long payloadHash, long firstSeenMs,
      long expiresAtMs) {
    return appends.accepted(idFingerprint, keyFingerprint, payloadHash, firstSeenMs, expiresAtMs);
  }

  @Override
  public Future<Void> claimed(long idFingerprint, long keyFingerprint, long payloadHash, String claimToken,
      long claimedAtMs, long leaseEndMs, long rememberUntilMs, String claimer) {
    return appends.claimed(idFingerprint, keyFingerprint, payloadHash, claimToken, claimedAtMs, leaseEndMs,
        rememberUntilMs, claimer);
  }

  @Override
  public Future<Void> committed(long idFingerprint, long keyFingerprint, long payloadHash, long committedAtMs,
      long expiresAtMs) {
    return appends.committed(idFingerprint, expiresAtMs);
  }

  @Override
  public Future<Void> released(long idFingerprint, long keyFingerprint) {
    return appends.released(idFingerprint);
  }

  @Override
  public Future<Void> offsetsCommitted(String topic, int partition, long offset) {
    return appends.offsetsCommitted(topic, partition, offset);
  }

  @Override
  public void beginBatch() {
    appends.beginBatch();
  }

  @Override
  public void endBatch() {
    appends.endBatch();
  }

  // ------------------------------------------------------------------------------------------------- retention

  /**
   * The retention pass, the one path for both callers: the first append of each roll cycle ({@link JournalAppends})
   * and the partition's periodic timer, which trims an idle journal too. Runs at most once per roll cycle
   * ({@link RetentionSchedule}). Nothing runs while the journal is not open, is opening, replaying or closing, or while
   * a pass is in flight: a replay reads what a pass would delete, and {@code close} waits for the pass in flight.
   */
  @Override
  public void retain() {
    Journal j = journal;
    if (j == null || opening != null || recovering != null || closing) {
      return;
    }
    retention.runIfDue(context, j);
    snapshots.runIfDue(context, j);
  }

  /**
   * Tests only: called on the partition's context with each window snapshot written (null removes it), and the
   * smallest tail of entries worth one (0: none).
   */
  void snapshots(Consumer<io.github.vertxdedup.journal.SnapshotResult> listener, long minTailEntries) {
    snapshots.listener(listener);
    snapshots.minTailEntries(minTailEntries);
  }

  /** Tests only: what the last recovery replayed, or null before the first. */
  ReplayResult lastReplay() {
    return lastReplay;
  }

  /** Tests only: called on the partition's context with the result of each retention pass; null removes it. */
  void retentionListener(Consumer<RetentionResult> listener) {
    retention.listener(listener);
  }

  // -------------------------------------------------------------------------------------------- claim mapping

  /**
   * Converts a claim token to the journal's 64-bit token.
   *
   * @param token 16 hex digits, as the partition issues them
   * @return its value
   * @throws IllegalArgumentException if it is not hexadecimal or longer than 16 digits
   */
  public static long tokenValue(String token) {
    try {
      return Long.parseUnsignedLong(token, 16);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("claimToken must be at most 16 hex digits but was '" + token + "'", e);
    }
  }

  /** @return the claim token text of a journal token (16 hex digits, the inverse of {@link #tokenValue}) */
  public static String tokenText(long token) {
    return Long.toHexString(token);
  }

}
