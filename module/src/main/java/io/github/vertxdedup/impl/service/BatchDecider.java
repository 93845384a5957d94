package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupCommitResult;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.time.DedupClock;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowVerdict;
import io.github.vertxdedup.window.WindowFullException;
import java.util.Arrays;

/**
 * Decides the batches of one partition: a {@code checkBatch} or {@code claimBatch} with the same results as
 * {@link PartitionCore#check} or {@link PartitionCore#claim} of each event in order, but with the window's cache
 * misses overlapped: runs of plain events go through the window's batch check, and other events are prefetched in
 * groups before they are decided one by one. Each event is answered on its own: a new event the full window refuses
 * is that element's 503, with nothing recorded for it. The batch's journal writes are buffered between
 * {@link PartitionJournal#beginBatch()} and {@link PartitionJournal#endBatch()}. A {@code commitBatch} is
 * {@link PartitionCore#commit} of each event in order ({@link #commit}).
 *
 * <p>Confined to the partition's event loop (not thread-safe): one per {@link PartitionCore}.
 */
final class BatchDecider {

  private final PartitionCore core;
  private final DedupWindow window;
  private final PartitionJournal journal;
  private final DedupClock clock;
  private final long windowMs;
  private final WindowRoom room;
  private final PartitionResults results;
  /** Scratch arrays of {@link #checkPlainRun}, grown to the largest batch seen. */
  private long[] runFingerprints = new long[0];
  private WindowVerdict[] runVerdicts = new WindowVerdict[0];

  /**
   * @param core the core whose single decisions a batch repeats
   * @param window the core's window
   * @param journal the core's journal, which buffers a batch's writes
   * @param clock the core's clock
   * @param windowMs the window's length, ms
   * @param room the core's room, which words a window's refusal
   * @param results the core's results
   */
  BatchDecider(PartitionCore core, DedupWindow window, PartitionJournal journal, DedupClock clock, long windowMs,
      WindowRoom room, PartitionResults results) {
    this.core = core;
    this.window = window;
    this.journal = journal;
    this.clock = clock;
    this.windowMs = windowMs;
    this.room = room;
    this.results = results;
  }

  /**
   * {@code commitBatch}: {@link PartitionCore#commit} of each event in order, each answered on its own: a 409 of one
   * (its claim lapsed, is not held, or has another token) is that element's failure, and the others are committed.
   * Each commit is journaled as a single commit is, so {@link PartitionCore#lastWrite} covers the whole batch.
   * O(events).
   *
   * @param events the validated events (id and claimToken each)
   * @return one result per event, in order
   */
  DedupCommitResult[] commit(ParsedEvent[] events) {
    DedupCommitResult[] out = new DedupCommitResult[events.length];
    for (int i = 0; i < events.length; i++) {
      try {
        out[i] = DedupCommitResult.committed(core.commit(events[i]));
      } catch (RequestFailure f) {
        out[i] = DedupCommitResult.failed(f.code(), f.getMessage());
      }
    }
    return out;
  }

  /**
   * Decides a batch (see {@link PartitionCore#batch}). O(events).
   *
   * @param events validated events
   * @param claims true for {@code claimBatch}, false for {@code checkBatch}
   * @return one element per event, in order: its result, or its 503
   */
  DedupBatchResult[] decide(ParsedEvent[] events, boolean claims) {
    journal.beginBatch();
    try {
      return decideBatch(events, claims);
    } finally {
      // Writes what the batch buffered (its accepts as one record) and settles the futures handed out meanwhile.
      journal.endBatch();
    }
  }

  private DedupBatchResult[] decideBatch(ParsedEvent[] events, boolean claims) {
    DedupBatchResult[] out = new DedupBatchResult[events.length];
    if (claims || !core.claims().isEmpty() || core.unvouchedAt(clock.nowMs())) {
      // One event at a time (claims are involved, or new ids are unvouched after a takeover), but the window slots of a group are read first, so that their
      // cache misses overlap rather than each decision waiting for its own (as the batch check does inside).
      for (int group = 0; group < events.length; group += DedupWindow.PREFETCH_GROUP) {
        int end = Math.min(events.length, group + DedupWindow.PREFETCH_GROUP);
        for (int i = group; i < end; i++) {
          window.prefetch(events[i].idFp);
          if (events[i].keyFp != 0) {
            window.prefetch(events[i].keyFp);
          }
        }
        for (int i = group; i < end; i++) {
          out[i] = decideOne(events[i], claims);
        }
      }
      return out;
    }
    // No claim can be involved (a check creates none): runs of plain events go through the window's batch check,
    // which overlaps their cache misses; an event with a key, payload hash or instant takes the single path. An
    // event time the partition covers (and that is not late) changes nothing, so it stays plain: the Kafka
    // consumer sends every record's timestamp. So does one older than the partition covers (but not late) under
    // UncoveredPolicy.ACCEPT, the Kafka consumer's: it is decided as a covered one, and its accept marked. Covered
    // as of the batch's start: an early eviction inside the batch (EVICT_OLDEST) moves the memory's start only for
    // the batches after it.
    long coveredFromMs = core.coveredFromMs();
    long notLateFromMs = clock.nowMs() - windowMs;
    long plainFromMs = core.acceptsUncovered() ? notLateFromMs : Math.max(coveredFromMs, notLateFromMs);
    int i = 0;
    while (i < events.length) {
      if (!plain(events[i], plainFromMs)) {
        out[i] = decideOne(events[i], false);
        i++;
        continue;
      }
      int end = i + 1;
      while (end < events.length && plain(events[end], plainFromMs)) {
        end++;
      }
      checkPlainRun(events, i, end, coveredFromMs, out);
      i = end;
    }
    return out;
  }

  /**
   * An event the window's batch check can decide: id only, default expiry, no payload hash, and no event time or one
   * from {@code plainFromMs} on (not a late delivery, and covered or accepted uncovered: {@link PartitionCore#check}
   * would decide it with the window's one probe too).
   */
  private static boolean plain(ParsedEvent e, long plainFromMs) {
    return e.keyFp == 0 && e.payloadHash == DedupWindow.NO_PAYLOAD_HASH
        && (e.eventTimeMs == ParsedEvent.NO_EVENT_TIME || e.eventTimeMs >= plainFromMs)
        && e.rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL;
  }

  /** Check or claim of one event of a batch; a refusal for want of room is its element. */
  private DedupBatchResult decideOne(ParsedEvent e, boolean claim) {
    try {
      return results.element(claim ? core.claim(e) : core.check(e));
    } catch (RequestFailure f) {
      return DedupBatchResult.failed(f.code(), f.getMessage());
    } catch (WindowFullException full) {
      return windowFull(full);
    }
  }

  /** The element of an event the window itself refused (its cap under REJECT, or a table that cannot grow). */
  private DedupBatchResult windowFull(WindowFullException full) {
    return DedupBatchResult.failed(DedupFailure.UNAVAILABLE, room.windowFull(full));
  }

  /**
   * Decides a run of plain events with the window's batch check. No claim is live here, so the window's own cap is
   * the only limit: when it refuses a new id, the window has written the verdicts before it and no other, that event
   * is refused and the rest of the run is decided one by one. An accepted event older than {@code coveredFromMs} is
   * marked uncovered (only under {@code UncoveredPolicy.ACCEPT} does such an event reach a run).
   */
  private void checkPlainRun(ParsedEvent[] events, int from, int to, long coveredFromMs, DedupBatchResult[] out) {
    int n = to - from;
    if (runFingerprints.length < n) {
      runFingerprints = new long[n];
      runVerdicts = new WindowVerdict[n];
    }
    for (int k = 0; k < n; k++) {
      runFingerprints[k] = events[from + k].idFp;
    }
    // Empty slots mark the verdicts the window did not write, should it refuse an event.
    Arrays.fill(runVerdicts, 0, n, null);
    final long now = clock.nowMs();
    int decided = n;
    WindowFullException refused = null;
    try {
      window.checkBatch(runFingerprints, 0, n, runVerdicts);
    } catch (WindowFullException full) {
      refused = full;
      // The verdicts written are those before the refused event: the first slot left empty is the refused one.
      decided = 0;
      while (runVerdicts[decided] != null) {
        decided++;
      }
    }
    for (int k = 0; k < decided; k++) {
      long eventTimeMs = events[from + k].eventTimeMs;
      boolean uncovered = eventTimeMs != ParsedEvent.NO_EVENT_TIME && eventTimeMs < coveredFromMs;
      out[from + k] = results.element(core.checked(runFingerprints[k], DedupWindow.NO_PAYLOAD_HASH,
          DedupWindow.DEFAULT_REMEMBER_UNTIL, runVerdicts[k], uncovered, now));
    }
    if (refused != null) {
      out[from + decided] = windowFull(refused);
      for (int k = decided + 1; k < n; k++) {
        out[from + k] = decideOne(events[from + k], false);
      }
    }
  }
}
