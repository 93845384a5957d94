package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.JournalQueue.LOG;
import static io.github.vertxdedup.journal.RecordFormat.ACCEPT;
import static io.github.vertxdedup.journal.RecordFormat.CLAIM;
import static io.github.vertxdedup.journal.RecordFormat.COMMIT;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_CARRIED;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_KEYS;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_PAYLOADS;
import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;
import static io.github.vertxdedup.journal.RecordFormat.OFFSETS;
import static io.github.vertxdedup.journal.RecordFormat.RELEASE;
import static io.github.vertxdedup.journal.RecordFormat.ROLL;
import static io.github.vertxdedup.journal.RecordFormat.SNAPSHOT_END;
import static io.github.vertxdedup.journal.RecordFormat.UNKNOWN_EXPIRY;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.io.Closeable;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The writing side of a {@link Journal}, Chronicle's appender side: encodes and appends records on the owner's
 * thread, starts each new roll cycle with its {@code ROLL} record, the owner's roll snapshot and {@code SNAPSHOT_END},
 * and hands every appended index to the {@link Syncer}, which makes it durable on another thread ({@link #sync}, or
 * the background sync under {@link SyncPolicy#ASYNC}).
 *
 * <p>Threads: the {@code append*} methods are confined to the owner's thread, one at a time (not thread-safe; a
 * second caller is refused while an append runs); {@link #sync} and the accessors are thread-safe.
 */
final class JournalWriter {

  /** Entries per carried-over record in a roll snapshot. */
  private static final int SNAPSHOT_CHUNK = 1024;

  private final JournalQueue q;
  private final Syncer syncer;
  private final ScheduledFuture<?> backgroundSync;
  private final AtomicLong appendFailures = new AtomicLong();
  private final AtomicLong syncFailures = new AtomicLong();
  private volatile Throwable syncFailure;

  // Owner's thread only.
  private final RecordEncoder encoder = new RecordEncoder();
  private final SnapshotWriter snapshotWriter = new SnapshotWriter();
  private ExcerptAppender appender;
  private boolean appending;
  private boolean appendedAny;
  private int rolledCycle;
  private int writtenCycle = CycleCatalog.NONE;
  private long writtenCycleMaxExpiry = NO_EXPIRY;
  private File writtenFile;
  private Runnable writeFault;

  /**
   * Creates the appender (which writes the end-of-cycle markers a killed writer did not write; with the tail
   * repaired it has nothing to wait for, and would wait at most {@code chronicleTimeout}), the syncer and, under
   * {@link SyncPolicy#ASYNC}, the background sync. Blocking.
   *
   * @param rolledCycle the newest cycle on disk if it starts with a complete roll snapshot, else
   *     {@link CycleCatalog#NONE}: the first append in any other cycle writes a roll snapshot first
   */
  JournalWriter(JournalQueue q, int rolledCycle) {
    this.q = q;
    this.rolledCycle = rolledCycle;
    try {
      this.appender = q.queue.createAppender();
      this.syncer = new Syncer(q.dir);
      this.backgroundSync = q.options.getSyncPolicy() == SyncPolicy.ASYNC
          ? BackgroundSync.schedule(this::backgroundSync, q.options.getSyncInterval())
          : null;
    } catch (RuntimeException | Error e) {
      Closeable.closeQuietly(appender);
      throw e;
    }
  }

  // --------------------------------------------------------------------------------------------------- appends

  long appendAccept(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs, long expiresAtMs) {
    checkAccept(fingerprint, acceptedAtMs, expiresAtMs);
    beginAppend();
    try {
      int flags = (keyFingerprint != 0 ? FLAG_KEYS : 0) | (payloadHash != 0 ? FLAG_PAYLOADS : 0);
      RecordEncoder e = encoder;
      e.begin(ACCEPT, flags, 1);
      e.putLong(fingerprint);
      if (keyFingerprint != 0) {
        e.putLong(keyFingerprint);
      }
      if (payloadHash != 0) {
        e.putLong(payloadHash);
      }
      e.putLong(acceptedAtMs);
      e.putLong(expiresAtMs);
      return write(expiresAtMs);
    } finally {
      appending = false;
    }
  }

  long appendAccepts(AcceptBatch batch) {
    Objects.requireNonNull(batch, "batch");
    if (batch.size == 0) {
      throw new IllegalArgumentException("batch must not be empty");
    }
    beginAppend();
    try {
      int flags = (batch.anyKey ? FLAG_KEYS : 0) | (batch.anyPayload ? FLAG_PAYLOADS : 0);
      encoder.begin(ACCEPT, flags, batch.size);
      encoder.putAccepts(batch, flags);
      long max = NO_EXPIRY;
      long[] expires = batch.expiresAtMs;
      for (int i = 0, n = batch.size; i < n; i++) {
        max = Math.max(max, expires[i]);
      }
      return write(max);
    } finally {
      appending = false;
    }
  }

  long appendClaim(ClaimEntry claim) {
    Objects.requireNonNull(claim, "claim");
    byte[] claimer = claim.claimerUtf8();
    beginAppend();
    try {
      encoder.begin(CLAIM, 0, 1);
      putClaim(encoder, claim, claimer);
      return write(NO_EXPIRY); // a claim does not keep its cycle: the roll snapshot carries it while it is open
    } finally {
      appending = false;
    }
  }

  long appendCommit(long fingerprint, long token, long expiresAtMs) {
    checkFingerprint(fingerprint);
    beginAppend();
    try {
      encoder.begin(COMMIT, 0, 1);
      encoder.putLong(fingerprint);
      encoder.putLong(token);
      encoder.putLong(expiresAtMs);
      return write(expiresAtMs);
    } finally {
      appending = false;
    }
  }

  long appendRelease(long fingerprint, long token) {
    checkFingerprint(fingerprint);
    beginAppend();
    try {
      encoder.begin(RELEASE, 0, 1);
      encoder.putLong(fingerprint);
      encoder.putLong(token);
      return write(NO_EXPIRY);
    } finally {
      appending = false;
    }
  }

  long appendOffsetCommits(Collection<OffsetCommit> commits) {
    Objects.requireNonNull(commits, "commits");
    if (commits.isEmpty() || commits.size() > AcceptBatch.MAX_SIZE) {
      throw new IllegalArgumentException(
          "commits must hold 1 to " + AcceptBatch.MAX_SIZE + " offsets but held " + commits.size());
    }
    beginAppend();
    try {
      encoder.begin(OFFSETS, 0, commits.size());
      for (OffsetCommit c : commits) {
        putOffset(encoder, c.topic().getBytes(StandardCharsets.UTF_8), c.partition(), c.offset());
      }
      return write(NO_EXPIRY);
    } finally {
      appending = false;
    }
  }

  /** @return whether anything was appended since the journal was opened (replay must come first) */
  boolean appendedAny() {
    return appendedAny;
  }

  private void beginAppend() {
    if (appending) {
      throw new IllegalStateException("journal " + q.dir + ": append called while another append runs (from a roll "
          + "snapshot source, or from a second thread); the appender is single-threaded");
    }
    JournalQueue.State s = q.state;
    if (s != JournalQueue.State.READY) {
      throw new IllegalStateException(s == JournalQueue.State.CLOSED
          ? "journal " + q.dir + " is closed"
          : "journal " + q.dir + ": replay() must complete before the first append (recover first: each new cycle "
              + "carries the owner's recovered claims and offsets)");
    }
    Throwable failed = syncFailure;
    if (failed != null) {
      throw new JournalWriteException("journal " + q.dir + ": an earlier sync failed, so what reached the disk is "
          + "unknown; close and reopen the journal", failed);
    }
    appending = true;
    try {
      long t = q.time.advance();
      int cycle = (int) Math.floorDiv(t - q.epochMs, q.cycleMs);
      if (cycle != rolledCycle) {
        roll(cycle, t);
      }
    } catch (RuntimeException | Error e) {
      appending = false;
      throw e;
    }
  }

  /** Starts {@code cycle}: ROLL, the owner's snapshot, SNAPSHOT_END. Retried by the next append if it fails. */
  private void roll(int cycle, long nowMs) {
    CycleCatalog catalog = q.catalog;
    int newest = catalog.newest();
    int previous = newest == cycle ? catalog.newestBefore(cycle) : newest;
    long previousMax = NO_EXPIRY;
    if (previous != CycleCatalog.NONE) {
      long known = catalog.maxExpiry(previous);
      previousMax = previous == writtenCycle && known != UNKNOWN_EXPIRY
          ? Math.max(known, writtenCycleMaxExpiry)
          : known;
      // Final from here: nothing is written to a cycle once a later one has begun.
      catalog.exact(previous, previousMax);
    }
    encoder.begin(ROLL, 0, 1);
    encoder.putInt(cycle);
    encoder.putInt(previous);
    encoder.putLong(previousMax);
    encoder.putLong(nowMs);
    write(NO_EXPIRY);
    SnapshotWriter w = snapshotWriter;
    w.clear();
    try {
      q.options.getRollSnapshotSource().writeSnapshot(w);
    } catch (RuntimeException e) {
      throw new JournalWriteException("journal " + q.dir + ": the roll snapshot source failed; the append was not "
          + "written and the next append writes the snapshot again", e);
    }
    w.flush();
    encoder.begin(SNAPSHOT_END, 0, 1);
    encoder.putInt(w.claimCount);
    encoder.putInt(w.offsetCount);
    write(NO_EXPIRY);
    catalog.started(cycle);
    rolledCycle = cycle;
  }

  /** Checksums the encoded record and writes it as one excerpt; rolls it back if anything fails. */
  private long write(long maxExpiry) {
    final int len = encoder.finish();
    final byte[] buf = encoder.buffer();
    final long index;
    final ExcerptAppender a;
    try {
      a = appender();
      DocumentContext dc = a.writingDocument();
      boolean complete = false;
      try {
        Bytes<?> bytes = dc.wire().bytes();
        Runnable fault = writeFault;
        if (fault == null) {
          bytes.write(buf, 0, len);
        } else {
          int half = len / 2;
          bytes.write(buf, 0, half);
          fault.run();
          bytes.write(buf, half, len - half);
        }
        complete = true;
      } finally {
        if (!complete) {
          dc.rollbackOnClose();
        }
        dc.close();
      }
      index = a.lastIndexAppended();
    } catch (RuntimeException | InternalError e) {
      // InternalError: a fault on the mapped file (SIGBUS), e.g. the disk filled up under a sparse file.
      appendFailures.incrementAndGet();
      discardAppender();
      throw new JournalWriteException("journal " + q.dir + ": append failed and was rolled back", e);
    }
    int cycle = q.rollCycle.toCycle(index);
    if (cycle != writtenCycle) {
      writtenCycle = cycle;
      writtenCycleMaxExpiry = NO_EXPIRY;
      writtenFile = a.currentFile();
    }
    if (maxExpiry > writtenCycleMaxExpiry) {
      writtenCycleMaxExpiry = maxExpiry;
    }
    appendedAny = true;
    syncer.appended(index, writtenFile);
    return index;
  }

  private ExcerptAppender appender() {
    ExcerptAppender a = appender;
    if (a == null) {
      a = q.queue.createAppender();
      appender = a;
    }
    return a;
  }

  private void discardAppender() {
    ExcerptAppender a = appender;
    appender = null;
    try {
      Closeable.closeQuietly(a);
    } catch (RuntimeException ignored) {
      // a broken appender; the next append opens a new one
    }
  }

  private static void putClaim(RecordEncoder e, ClaimEntry c, byte[] claimer) {
    e.putLong(c.fingerprint());
    e.putLong(c.keyFingerprint());
    e.putLong(c.payloadHash());
    e.putLong(c.token());
    e.putLong(c.claimedAtMs());
    e.putLong(c.leaseEndMs());
    e.putLong(c.rememberUntilMs());
    e.putShortString(claimer);
  }

  private static void putOffset(RecordEncoder e, byte[] topic, int partition, long offset) {
    e.putInt(partition);
    e.putLong(offset);
    e.putShortString(topic);
  }

  static void checkFingerprint(long fingerprint) {
    if (fingerprint == 0) {
      throw new IllegalArgumentException("fingerprint must not be 0");
    }
  }

  static void checkAccept(long fingerprint, long acceptedAtMs, long expiresAtMs) {
    checkFingerprint(fingerprint);
    if (expiresAtMs <= acceptedAtMs) {
      throw new IllegalArgumentException(
          "expiresAtMs must be > acceptedAtMs " + acceptedAtMs + " but was " + expiresAtMs);
    }
  }

  static byte[] claimerBytes(String claimerId) {
    Objects.requireNonNull(claimerId, "claimerId");
    byte[] utf8 = claimerId.getBytes(StandardCharsets.UTF_8);
    if (utf8.length > Journal.MAX_CLAIMER_BYTES) {
      throw new IllegalArgumentException(
          "claimerId must be <= " + Journal.MAX_CLAIMER_BYTES + " bytes in UTF-8 but was " + utf8.length);
    }
    return utf8;
  }

  /** Collects a roll snapshot and writes it as carried-over CLAIM and OFFSETS records of at most SNAPSHOT_CHUNK. */
  private final class SnapshotWriter implements RollSnapshotWriter {
    private final List<ClaimEntry> claims = new ArrayList<>();
    private final List<OffsetCommit> offsets = new ArrayList<>();
    int claimCount;
    int offsetCount;

    void clear() {
      claims.clear();
      offsets.clear();
      claimCount = 0;
      offsetCount = 0;
    }

    @Override
    public void claim(ClaimEntry claim) {
      claims.add(Objects.requireNonNull(claim, "claim"));
    }

    @Override
    public void offsetCommit(String topic, int partition, long offset) {
      offsets.add(new OffsetCommit(topic, partition, offset));
    }

    void flush() {
      for (int from = 0; from < claims.size(); from += SNAPSHOT_CHUNK) {
        int to = Math.min(claims.size(), from + SNAPSHOT_CHUNK);
        encoder.begin(CLAIM, FLAG_CARRIED, to - from);
        for (int i = from; i < to; i++) {
          ClaimEntry c = claims.get(i);
          putClaim(encoder, c, c.claimerUtf8());
        }
        write(NO_EXPIRY);
      }
      for (int from = 0; from < offsets.size(); from += SNAPSHOT_CHUNK) {
        int to = Math.min(offsets.size(), from + SNAPSHOT_CHUNK);
        encoder.begin(OFFSETS, FLAG_CARRIED, to - from);
        for (int i = from; i < to; i++) {
          OffsetCommit o = offsets.get(i);
          putOffset(encoder, o.topic().getBytes(StandardCharsets.UTF_8), o.partition(), o.offset());
        }
        write(NO_EXPIRY);
      }
      claimCount = claims.size();
      offsetCount = offsets.size();
    }
  }

  // ------------------------------------------------------------------------------------------------------- sync

  /** See {@link Journal#sync}. Thread-safe; blocking. */
  long sync() {
    if (q.state == JournalQueue.State.CLOSED) {
      throw new IllegalStateException("journal " + q.dir + " is closed");
    }
    Throwable failed = syncFailure;
    if (failed != null) {
      throw new JournalWriteException("journal " + q.dir + ": an earlier sync failed; close and reopen it", failed);
    }
    try {
      return syncer.sync();
    } catch (IOException | RuntimeException e) {
      syncFailure = e;
      syncFailures.incrementAndGet();
      throw new JournalWriteException("journal " + q.dir + ": sync failed; the journal must be reopened", e);
    }
  }

  private void backgroundSync() {
    if (q.state == JournalQueue.State.CLOSED || syncFailure != null) {
      return;
    }
    try {
      sync();
    } catch (JournalWriteException e) {
      LOG.log(System.Logger.Level.ERROR, "journal " + q.dir + ": background sync failed; appends fail until the "
          + "journal is reopened", e);
    } catch (IllegalStateException closed) {
      // closed meanwhile
    }
  }

  long lastAppendedIndex() {
    return syncer.appendedIndex();
  }

  long syncedIndex() {
    return syncer.syncedIndex();
  }

  long appendFailures() {
    return appendFailures.get();
  }

  long syncFailures() {
    return syncFailures.get();
  }

  /** Tests only: runs {@code fault} in the middle of writing each record; null removes it. */
  void writeFault(Runnable fault) {
    this.writeFault = fault;
  }

  // ------------------------------------------------------------------------------------------------------ close

  /** The first step of closing: stops the background sync and syncs unless the policy is NONE or a sync failed. */
  void finalSync() {
    if (backgroundSync != null) {
      backgroundSync.cancel(false);
    }
    if (q.options.getSyncPolicy() != SyncPolicy.NONE && syncFailure == null) {
      try {
        syncer.sync();
      } catch (IOException | RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "journal " + q.dir + ": final sync failed", e);
      }
    }
  }

  /** Closes the appender (before the queue closes). */
  void closeAppender() {
    Closeable.closeQuietly(appender);
  }

  /** Closes the syncer's file handles (after the queue closed). */
  void closeSyncer() {
    syncer.close();
  }
}
