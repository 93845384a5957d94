package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.time.DedupClock;
import java.util.List;

/**
 * Effect-first: the leases of a partition's claims as its {@link PartitionOwner} sees them, and the rule that every
 * handler starts with half a lease ahead.
 *
 * <h2>Every handler starts with half a lease ahead</h2>
 * A run is claimed at once, but its handlers run one after the other, so the last of a long run could start after the
 * run's lease ended, and its commit would be refused. Before a handler starts, the owner looks at its claim's lease
 * end (the claim's request time plus {@code leaseMs}, on the injected clock the window also uses, so never later than
 * the window's, {@link #claiming}): with less than half a lease left it releases the claims not started and claims
 * them again (a new run from the head, {@link #mustClaimAgain}). It also sends the commits not sent yet first if their
 * leases are that short ({@link #lessThanHalfLeft}), since a handler that completes at once leaves its commit to go
 * with the next ones. So a handler call shorter than half of {@code leaseMs} is always committed within its lease,
 * whatever the run's size; claiming again costs a release and a claim per record only when a run is slower than half
 * a lease. A commit refused all the same (a handler slower than that) is followed by a check of the record's identity
 * ({@link CommitPipeline}), which records the id unless another delivery claimed it since the lease ended.
 *
 * <p>A record is claimed again for this reason once per handler call: if the claim made again has less than half a
 * lease left too (the window, or the replies to the commits the pipeline waits for, took more than half a lease),
 * claiming once more would not help, and its handler runs on it.
 *
 * <p>Event loop of its owner only.
 */
final class ClaimLeases {

  private final DedupClock clock;
  private final long leaseMs;

  /**
   * @param clock the clock of the windows
   * @param leaseMs the lease of every claim, in milliseconds (the window's default {@code leaseMs})
   */
  ClaimLeases(DedupClock clock, long leaseMs) {
    this.clock = clock;
    this.leaseMs = leaseMs;
  }

  /**
   * The run is about to be claimed: stamps each record's lease end. The window claims on the same clock, at this
   * instant or later, so its lease ends no earlier than this.
   */
  void claiming(List<? extends PendingRecord<?, ?>> run) {
    long leaseEndMs = clock.nowMs() + leaseMs;
    for (PendingRecord<?, ?> pending : run) {
      pending.leaseEndMs = leaseEndMs;
    }
  }

  /**
   * @param leaseEndMs when a claim's lease ends, epoch milliseconds on the injected clock ({@code Long.MAX_VALUE} for
   *     none)
   * @param nowMs now, on the same clock
   * @return true if less than half of {@code leaseMs} (rounded up) is left at {@code nowMs}: a handler started now
   *     might outlast the claim
   */
  boolean lessThanHalfLeft(long leaseEndMs, long nowMs) {
    return leaseEndMs - nowMs < leaseMs - leaseMs / 2;
  }

  /**
   * Before the handler of {@code head} starts: whether its claim has less than half its lease left (a long run
   * claimed at once, slow handlers, or a wait for commits or another delivery's lease) and was not claimed again for
   * that since its handler last started. If so it is marked claimed again, and the owner gives it back with every
   * other claim whose handler has not started and claims them again.
   *
   * @param nowMs now, on the injected clock
   * @return true if the head must be claimed again before its handler starts
   */
  boolean mustClaimAgain(PendingRecord<?, ?> head, long nowMs) {
    if (head.claimedAgainForLease || !lessThanHalfLeft(head.leaseEndMs, nowMs)) {
      return false;
    }
    head.claimedAgainForLease = true;
    return true;
  }

  /** The handler of {@code pending} starts: its claim may be made again for lack of lease once more. */
  void handlerStarts(PendingRecord<?, ?> pending) {
    pending.claimedAgainForLease = false;
  }
}
