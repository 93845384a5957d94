package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.RecordFormat.ACCEPT;
import static io.github.vertxdedup.journal.RecordFormat.CLAIM;
import static io.github.vertxdedup.journal.RecordFormat.COMMIT;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_KEYS;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_PAYLOADS;
import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;
import static io.github.vertxdedup.journal.RecordFormat.OFFSETS;
import static io.github.vertxdedup.journal.RecordFormat.RELEASE;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Objects;

/**
 * The writing side of a {@link Journal}, Chronicle's appender side: checks and encodes each record the owner appends
 * and writes it through the {@link RecordAppender}. Before the first append of a new roll cycle, the
 * {@link RollSnapshotAppender} starts that cycle ({@code ROLL}, the owner's roll snapshot, {@code SNAPSHOT_END}).
 * Durability is the {@link JournalSync}'s: once a sync failed, every append is refused.
 *
 * <p>Threads: the {@code append*} methods are confined to the owner's thread, one at a time (not thread-safe; a
 * second caller, or a roll snapshot source appending from inside an append, is refused while an append runs);
 * {@link #appendFailures} is thread-safe.
 */
final class JournalWriter {

  private final JournalQueue q;
  private final JournalSync sync;
  private final RecordAppender out;
  private final RecordEncoder encoder;
  private final RollSnapshotAppender rolls;
  private boolean appending;

  /**
   * Creates the appender. Blocking.
   *
   * @param rolledCycle the newest cycle on disk if it starts with a complete roll snapshot, else
   *     {@link CycleCatalog#NONE}: the first append in any other cycle writes a roll snapshot first
   */
  JournalWriter(JournalQueue q, JournalSync sync, int rolledCycle) {
    this.q = q;
    this.sync = sync;
    this.out = new RecordAppender(q, sync.syncer());
    this.encoder = out.encoder();
    this.rolls = new RollSnapshotAppender(q, out, rolledCycle);
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
      return out.append(expiresAtMs);
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
      return out.append(max);
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
      encoder.putClaim(claim, claimer);
      return out.append(NO_EXPIRY); // a claim does not keep its cycle: the roll snapshot carries it while it is open
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
      return out.append(expiresAtMs);
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
      return out.append(NO_EXPIRY);
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
        encoder.putOffset(c.topic().getBytes(StandardCharsets.UTF_8), c.partition(), c.offset());
      }
      return out.append(NO_EXPIRY);
    } finally {
      appending = false;
    }
  }

  /** @return whether anything was appended since the journal was opened (replay must come first) */
  boolean appendedAny() {
    return out.appendedAny();
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
    sync.checkNotFailed();
    appending = true;
    try {
      rolls.startCycleAt(q.time.advance());
    } catch (RuntimeException | Error e) {
      appending = false;
      throw e;
    }
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

  /** @return how many appends failed since the journal was opened; thread-safe */
  long appendFailures() {
    return out.appendFailures();
  }

  /** Tests only: runs {@code fault} in the middle of writing each record; null removes it. */
  void writeFault(Runnable fault) {
    out.writeFault(fault);
  }

  /** Closes the appender (before the queue closes). */
  void close() {
    out.close();
  }
}
