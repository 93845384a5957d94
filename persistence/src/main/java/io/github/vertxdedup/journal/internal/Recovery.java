package io.github.vertxdedup.journal.internal;

import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.LiveEntrySink;
import io.github.vertxdedup.journal.SnapshotCompaction;
import io.github.vertxdedup.journal.SnapshotEntries;
import io.github.vertxdedup.journal.SnapshotOutput;
import java.util.function.Consumer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * What a journal's records mean for its owner's recovery: a {@link JournalVisitor} that turns a {@link Journal#replay}
 * into the live entries to remember, the claims still open, the committed offsets and the instant from which the
 * journal holds every accept.
 *
 * <ul>
 *   <li>An accept whose expiry has passed at {@code nowMs} is skipped; a live one is handed to the
 *   {@link LiveEntrySink} as it is read, for its id and, if it has one, for its key. A window snapshot's entries
 *   go to the sink in place instead if it takes them ({@link LiveEntrySink#takeSnapshotEntries}); it then skips the
 *   expired ones itself.</li>
 *   <li>A commit or release settles the latest claim of the same fingerprint (an id has at most one claim open).
 *   A live commit becomes a live entry with its claim's key and payload hash. Its first-seen time is the commit time
 *   when the claim used the owner's default remember-until ({@code expiry - windowMs}: the record has no commit time),
 *   else the claim time, and never after the expiry.</li>
 *   <li>A claim left open (its owner crashed) is never taken for a commit: {@link #forEachOpenClaim} hands it back
 *   until its lease ends.</li>
 *   <li>A claim of format version 1 carries its claim time, payload hash and remember-until in its claimer text
 *   ({@link ClaimerTextV1}) and names no claimer. A claim time that was not recorded is taken as the lease end, or
 *   {@code nowMs} if that is earlier.</li>
 *   <li>Offsets keep the highest per topic-partition ({@link CommittedOffsets}).</li>
 * </ul>
 *
 * <p>Threads: the visitor methods run on the replaying thread; read the results on any thread after the replay
 * returned (the caller orders the hand-over). Not thread-safe.
 */
public final class Recovery implements JournalVisitor {

  /** Returned by {@link #memoryBeginsMs} when nothing says since when the journal remembers. */
  public static final long NO_MEMORY = Long.MAX_VALUE;

  private final long nowMs;
  private final long windowMs;
  private final LiveEntrySink sink;
  private final Long2ObjectHashMap<ReplayClaim> claims = new Long2ObjectHashMap<>();
  private final CommittedOffsets offsets = new CommittedOffsets();
  private long earliestMs = Long.MAX_VALUE;

  /**
   * @param nowMs the owner's time at recovery, epoch milliseconds: entries expired by then are skipped
   * @param windowMs the owner's default remember-for (its window), milliseconds: a commit under the default
   *     remember-until was made at {@code expiry - windowMs}
   * @param sink receives the live entries
   * @throws NullPointerException if {@code sink} is null
   */
  public Recovery(long nowMs, long windowMs, LiveEntrySink sink) {
    this.nowMs = nowMs;
    this.windowMs = windowMs;
    this.sink = java.util.Objects.requireNonNull(sink, "sink");
  }

  @Override
  public void onAccept(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs,
      long expiresAtMs) {
    if (acceptedAtMs < earliestMs) {
      earliestMs = acceptedAtMs;
    }
    if (expiresAtMs <= nowMs) {
      return;
    }
    sink.live(fingerprint, payloadHash, acceptedAtMs, expiresAtMs);
    if (keyFingerprint != 0) {
      sink.live(keyFingerprint, payloadHash, acceptedAtMs, expiresAtMs);
    }
  }

  @Override
  public void onSnapshotEntries(long entries) {
    sink.expect(entries);
  }

  /**
   * Forwards the snapshot's entries in place to the sink ({@link LiveEntrySink#takeSnapshotEntries}). If it takes
   * them, the only thing this recovery would have drawn from them one by one, their earliest first-seen time (the
   * start of memory counts expired entries too), is taken from {@link SnapshotEntries#minFirstSeenMs}; what
   * {@link #onAccept} would have filtered as expired, the sink filters itself.
   *
   * @param entries the snapshot's entries
   * @return whether the sink took them
   */
  @Override
  public boolean onSnapshotEntriesInPlace(SnapshotEntries entries) {
    if (!sink.takeSnapshotEntries(entries)) {
      return false;
    }
    if (entries.minFirstSeenMs() < earliestMs) {
      earliestMs = entries.minFirstSeenMs();
    }
    return true;
  }

  @Override
  public void onSnapshot(long index, long coveredSinceMs) {
    if (coveredSinceMs < earliestMs) {
      earliestMs = coveredSinceMs;
    }
  }

  @Override
  public void onClaim(ClaimEntry c) {
    long claimedAt;
    long payloadHash;
    long rememberUntil;
    String claimer;
    if (c.formatVersion() == 1) {
      // Written before claims had columns of their own: the claimer text holds them, and nobody is named.
      long[] a = ClaimerTextV1.decode(c.claimerId());
      claimedAt = a != null ? a[0] : Math.min(c.leaseEndMs(), nowMs);
      payloadHash = a != null ? a[1] : 0;
      rememberUntil = a != null ? a[2] : ClaimEntry.NOT_RECORDED;
      claimer = ClaimEntry.NO_CLAIMER;
    } else {
      claimedAt = c.claimedAtMs() != ClaimEntry.NOT_RECORDED ? c.claimedAtMs() : Math.min(c.leaseEndMs(), nowMs);
      payloadHash = c.payloadHash();
      rememberUntil = c.rememberUntilMs();
      claimer = c.claimerId();
    }
    if (claimedAt < earliestMs) {
      earliestMs = claimedAt;
    }
    claims.put(c.fingerprint(), new ReplayClaim(c.keyFingerprint(), c.token(), claimedAt, payloadHash,
        rememberUntil, c.leaseEndMs(), claimer));
  }

  @Override
  public void onCommit(long fingerprint, long token, long expiresAtMs) {
    // Matched by fingerprint: the latest claim of an id is the one its commit settles.
    ReplayClaim c = claims.remove(fingerprint);
    if (expiresAtMs <= nowMs) {
      return;
    }
    long firstSeen = c == null || c.rememberUntilMs == ClaimEntry.NOT_RECORDED
        ? expiresAtMs - windowMs
        : c.claimedAtMs;
    firstSeen = Math.min(firstSeen, expiresAtMs);
    long payloadHash = c == null ? 0 : c.payloadHash;
    sink.live(fingerprint, payloadHash, firstSeen, expiresAtMs);
    if (c != null && c.keyFingerprint != 0) {
      sink.live(c.keyFingerprint, payloadHash, firstSeen, expiresAtMs);
    }
  }

  @Override
  public void onRelease(long fingerprint, long token) {
    claims.remove(fingerprint);
  }

  @Override
  public void onOffsetCommit(String topic, int partition, long offset) {
    offsets.record(topic, partition, offset);
  }

  /**
   * Hands every claim the replay left open whose lease ends after {@code nowMs} to {@code action}, in the layout of
   * the current format: claim time, payload hash and remember-until in their columns
   * ({@link ClaimEntry#NOT_RECORDED} for the default), {@link ClaimEntry#NO_CLAIMER} if nobody was named (always for
   * a claim of format version 1). O(open claims).
   *
   * @param nowMs the owner's time now, epoch milliseconds
   * @param action receives each open claim, in no particular order
   */
  public void forEachOpenClaim(long nowMs, Consumer<ClaimEntry> action) {
    claims.forEach((fp, c) -> {
      if (c.leaseEndMs > nowMs) {
        action.accept(ClaimEntry.of(fp, c.keyFingerprint, c.payloadHash, c.token, c.claimedAtMs, c.leaseEndMs,
            c.rememberUntilMs, c.claimer));
      }
    });
  }

  /**
   * Returns the instant from which the journal holds every accept of its owner: the earlier of its first open
   * ({@link JournalLayout#memoryBegan}) and its earliest accept or claim, and not after {@code nowMs}.
   *
   * @param firstOpenedMs when the journal was first opened, or {@link #NO_MEMORY} if unknown
   * @param nowMs the owner's time now, epoch milliseconds
   * @return the instant, epoch milliseconds, or {@link #NO_MEMORY} if the journal holds nothing and its first open
   *     is unknown
   */
  public long memoryBeginsMs(long firstOpenedMs, long nowMs) {
    long began = Math.min(earliestMs, firstOpenedMs);
    return began == NO_MEMORY ? NO_MEMORY : Math.min(began, nowMs);
  }

  /**
   * Returns the committed offsets the replay saw, the highest per topic-partition.
   *
   * @return the offsets (this recovery's own set; copy it to keep it)
   */
  public CommittedOffsets offsets() {
    return offsets;
  }

  /**
   * The compaction a journal's window snapshot is written with ({@link Journal#writeSnapshot}): a recovery at
   * {@code nowMs} whose live entries go to the snapshot as they are read, and which then writes the claims whose
   * lease ends after {@code nowMs}, the highest offset per topic-partition and the earliest instant it saw. Loading
   * that snapshot and replaying the records after it into a recovery gives the same live entries (in the same
   * order), open claims, offsets and start of memory as a replay of every record: an entry expired by then, a
   * claim whose lease ended by then (a commit of it after its lease is refused, so none follows in the journal) and
   * a lower offset are what such a replay drops too.
   *
   * @param nowMs the owner's time, epoch milliseconds
   * @param windowMs the owner's window, milliseconds (see {@link #Recovery})
   * @param out where the snapshot is written
   * @return the compaction
   */
  public static SnapshotCompaction compaction(long nowMs, long windowMs, SnapshotOutput out) {
    java.util.Objects.requireNonNull(out, "out");
    Recovery r = new Recovery(nowMs, windowMs, out::entry);
    return new SnapshotCompaction() {
      @Override
      public JournalVisitor visitor() {
        return r;
      }

      @Override
      public void finish() {
        out.coveredSince(r.earliestMs);
        r.forEachOpenClaim(nowMs, out::claim);
        for (io.github.vertxdedup.journal.OffsetCommit o : r.offsets.toList()) {
          out.offset(o.topic(), o.partition(), o.offset());
        }
      }
    };
  }

  /** A claim seen during replay, not yet matched with its commit or release. */
  private record ReplayClaim(long keyFingerprint, long token, long claimedAtMs, long payloadHash,
      long rememberUntilMs, long leaseEndMs, String claimer) {
  }
}
