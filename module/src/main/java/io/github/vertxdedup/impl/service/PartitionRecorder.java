package io.github.vertxdedup.impl.service;

import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.window.WindowFullException;
import io.vertx.core.Future;

/**
 * Records what {@link PartitionCore} decided: the entries a decision adds to the window, its journal record, and its
 * counters, and remembers the latest journal write issued ({@link #lastWrite}), which a reply decided now must wait
 * for. It decides nothing: every method is called once the decision is made (and, for a new event, once there is
 * room for it).
 *
 * <p>An accepted id is remembered until its {@code rememberUntilMs}, or for the window ({@code now + windowMs}) by
 * default; a committed claim is remembered from its commit, unless its {@code rememberUntilMs} has passed by then.
 *
 * <p>Confined to the partition's event loop (not thread-safe): one per {@link PartitionCore}.
 */
final class PartitionRecorder {

  private static final Future<Void> DONE = Future.succeededFuture();

  private final DedupWindow window;
  private final PartitionJournal journal;
  private final PartitionCounters counters;
  private final long windowMs;
  private Future<?> lastWrite = DONE;

  /**
   * @param window the partition's window
   * @param journal where decisions are recorded
   * @param counters where recorded decisions are counted
   * @param windowMs the window's length, ms: the default remember-until is {@code now + windowMs}
   */
  PartitionRecorder(DedupWindow window, PartitionJournal journal, PartitionCounters counters, long windowMs) {
    this.window = window;
    this.journal = journal;
    this.counters = counters;
    this.windowMs = windowMs;
  }

  /** @return the latest journal write issued; a reply decided now must wait for it */
  Future<?> lastWrite() {
    return lastWrite;
  }

  /**
   * A new event was accepted by {@code check}: its id and key (if any) enter the window, and the accept is counted
   * and journaled.
   *
   * @param e the event
   * @param uncovered true if it is older than the partition covers (counted in {@code uncovered})
   * @param now the clock's reading, ms
   * @throws WindowFullException if the window refuses the id (nothing recorded); see {@link #rememberKey} for the key
   */
  void accepted(ParsedEvent e, boolean uncovered, long now) {
    window.check(e.idFp, e.payloadHash, e.rememberUntilMs);
    if (e.keyFp != 0) {
      rememberKey(e.keyFp, e.payloadHash, e.rememberUntilMs);
    }
    journalAccept(e.idFp, e.keyFp, e.payloadHash, e.rememberUntilMs, now);
    if (uncovered) {
      counters.uncovered++;
    }
  }

  /**
   * The window's own check has just accepted an id without a key (it is in the window already): counted and
   * journaled.
   *
   * @param idFp the id's fingerprint
   * @param payloadHash its payload hash, or {@link DedupWindow#NO_PAYLOAD_HASH}
   * @param rememberUntilMs its remember-until, or {@link DedupWindow#DEFAULT_REMEMBER_UNTIL}
   * @param uncovered true if its event is older than the partition covers (counted in {@code uncovered})
   * @param now the clock's reading, ms
   */
  void windowAccepted(long idFp, long payloadHash, long rememberUntilMs, boolean uncovered, long now) {
    journalAccept(idFp, 0, payloadHash, rememberUntilMs, now);
    if (uncovered) {
      counters.uncovered++;
    }
  }

  /**
   * A claim is held: counted (a claim and an accept) and journaled.
   *
   * @param c the claim
   * @param uncovered true if its event is older than the partition covers (counted in {@code uncovered})
   * @param now the clock's reading, ms: the claim's time
   */
  void claimed(Claim c, boolean uncovered, long now) {
    counters.claims++;
    counters.accepted++;
    if (uncovered) {
      counters.uncovered++;
    }
    lastWrite = journal.claimed(c.idFp, c.keyFp, c.payloadHash, c.token, now, c.leaseEndMs, c.rememberUntilMs,
        c.claimer);
  }

  /**
   * A claim is committed: its id and key (if any) enter the window, unless its {@code rememberUntilMs} has passed,
   * and the commit is counted and journaled. The claim reserved these entries, and kept every other request for the
   * id (or key) out of the window.
   *
   * @param c the claim, still held
   * @param now the clock's reading, ms
   * @throws WindowFullException if the window's table cannot grow for the id (nothing recorded)
   */
  void committed(Claim c, long now) {
    long until = c.rememberUntilMs;
    boolean remember = until == DedupWindow.DEFAULT_REMEMBER_UNTIL || until > now;
    if (remember) {
      window.check(c.idFp, c.payloadHash, until);
      if (c.keyFp != 0) {
        rememberKey(c.keyFp, c.payloadHash, until);
      }
    }
    counters.commits++;
    lastWrite = journal.committed(c.idFp, c.keyFp, c.payloadHash, now, remember ? expiresAt(until, now) : now);
  }

  /**
   * A claim is released (on its own, or as one of a restarted claimer's): counted and journaled.
   *
   * @param c the claim
   */
  void released(Claim c) {
    counters.releases++;
    lastWrite = journal.released(c.idFp, c.keyFp);
  }

  private void journalAccept(long idFp, long keyFp, long payloadHash, long rememberUntilMs, long now) {
    counters.accepted++;
    lastWrite = journal.accepted(idFp, keyFp, payloadHash, now, expiresAt(rememberUntilMs, now));
  }

  /**
   * Records the key of an event whose id was just recorded. The room for both was checked first; should the table
   * still be unable to grow, the id stays recorded and the event accepted (refusing it now would make its retry a
   * duplicate of an effect that never ran), and the key alone is not remembered: counted in {@code keysNotRecorded}.
   */
  private void rememberKey(long keyFp, long payloadHash, long rememberUntilMs) {
    try {
      window.check(keyFp, payloadHash, rememberUntilMs);
    } catch (WindowFullException full) {
      counters.keysNotRecorded++;
    }
  }

  private long expiresAt(long rememberUntilMs, long now) {
    return rememberUntilMs == DedupWindow.DEFAULT_REMEMBER_UNTIL ? now + windowMs : rememberUntilMs;
  }
}
