package io.github.vertxdedup.impl;

import java.util.Arrays;

/**
 * Claims in the order they were appended, which is lease-end order (the caller appends only a claim whose lease ends
 * no earlier than the last one's): a ring array that grows by doubling, with positional reads, so that a claim can
 * be found by its lease end in O(log n) ({@link #find}). Confined to the partition's event loop (not thread-safe).
 */
final class ClaimQueue {

  private Claim[] ring = new Claim[16];
  private int head;
  private int size;

  /** @return the claims queued */
  int size() {
    return size;
  }

  /** @return the first claim, or null if empty */
  Claim peekFirst() {
    return size == 0 ? null : ring[head];
  }

  /** @return the last claim, or null if empty */
  Claim peekLast() {
    return size == 0 ? null : ring[(head + size - 1) & (ring.length - 1)];
  }

  /**
   * Removes the first claim.
   *
   * @return it, or null if empty
   */
  Claim pollFirst() {
    if (size == 0) {
      return null;
    }
    Claim c = ring[head];
    ring[head] = null;
    head = (head + 1) & (ring.length - 1);
    size--;
    return c;
  }

  /**
   * Appends a claim. Amortized O(1).
   *
   * @param c a claim whose lease ends no earlier than the last one's (not checked)
   */
  void addLast(Claim c) {
    if (size == ring.length) {
      grow();
    }
    ring[(head + size) & (ring.length - 1)] = c;
    size++;
  }

  /**
   * Finds a queued claim by its lease end and token: a binary search for the lease end, then a scan of the claims
   * that share it. O(log n + claims with that lease end).
   *
   * @param leaseEndMs the claim's lease end, clock milliseconds
   * @param idFp the claim's id fingerprint
   * @param token the claim's token value
   * @return the claim, or null if none matches
   */
  Claim find(long leaseEndMs, long idFp, long token) {
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (get(mid).leaseEndMs < leaseEndMs) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (int i = lo; i < size; i++) {
      Claim c = get(i);
      if (c.leaseEndMs != leaseEndMs) {
        return null;
      }
      if (c.tokenValue == token && c.idFp == idFp) {
        return c;
      }
    }
    return null;
  }

  private Claim get(int i) {
    return ring[(head + i) & (ring.length - 1)];
  }

  private void grow() {
    Claim[] bigger = new Claim[ring.length * 2];
    for (int i = 0; i < size; i++) {
      bigger[i] = get(i);
    }
    Arrays.fill(ring, null);
    ring = bigger;
    head = 0;
  }
}
