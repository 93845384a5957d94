package io.github.vertxdedup.impl.service;

/**
 * Claims in the order they were appended, which is lease-end order (the caller appends only a claim whose lease ends
 * no earlier than the last one's): a ring that grows by doubling, kept as parallel arrays, so that a committed claim
 * can be found by its lease end in O(log n) ({@link #findCommitted}) and a lapsed one by the sweep
 * ({@link #firstLeaseEndMs}, {@link #pollFirst}).
 *
 * <p>An entry keeps the claim object only while it may still lapse (the claim is live) or the caller still needs it
 * at lease end ({@link #detach} with {@code keepClaim}). Once a claim is committed, released or expired, its entry
 * keeps three numbers (lease end, id fingerprint, token) and a flag saying whether it was committed, where the claim
 * object with its token text is about 140 bytes, for as long as the lease runs. A slot costs 29 bytes (three longs,
 * the flag, a compressed reference). The arrays double when full and halve when less than a quarter full (never
 * below 16 slots), so they hold 1 to 4 slots per entry, 29-116 bytes, and a burst's capacity is given back once it
 * drained. A partition that claims at a high rate keeps every claim of one lease (30 s by default) here, so this is
 * most of what claims cost in memory, and the claim objects die young instead of being copied by each young
 * collection.
 *
 * <p>Entries are named by a sequence number ({@link #addLast} returns it) that stays valid until the entry leaves the
 * queue. Confined to the partition's event loop (not thread-safe).
 */
final class ClaimQueue {

  /** The fewest slots the arrays have. */
  static final int MIN_CAPACITY = 16;

  private long[] leaseEnds = new long[MIN_CAPACITY];
  private long[] idFps = new long[MIN_CAPACITY];
  private long[] tokens = new long[MIN_CAPACITY];
  private boolean[] committed = new boolean[MIN_CAPACITY];
  /** The claim of an entry while it may lapse (or its owner asked to keep it), else null. */
  private Claim[] claims = new Claim[MIN_CAPACITY];
  private int head;
  private int size;
  /** Sequence number of the entry at {@code head}. */
  private long headSeq;

  /** @return the entries queued */
  int size() {
    return size;
  }

  /** @return true if no entry is queued */
  boolean isEmpty() {
    return size == 0;
  }

  /** @return the lease end of the first entry, clock ms; {@link Long#MAX_VALUE} if empty */
  long firstLeaseEndMs() {
    return size == 0 ? Long.MAX_VALUE : leaseEnds[head];
  }

  /** @return the lease end of the last entry, clock ms; {@link Long#MIN_VALUE} if empty */
  long lastLeaseEndMs() {
    return size == 0 ? Long.MIN_VALUE : leaseEnds[index(size - 1)];
  }

  /**
   * Removes the first entry.
   *
   * @return its claim if the entry still held one (a live claim whose lease ended, or one kept with
   *     {@link #detach}), else null; also null if the queue is empty
   */
  Claim pollFirst() {
    if (size == 0) {
      return null;
    }
    Claim c = claims[head];
    claims[head] = null;
    head = (head + 1) & (claims.length - 1);
    size--;
    headSeq++;
    if (claims.length > MIN_CAPACITY && size < claims.length / 4) {
      resize(claims.length / 2);
    }
    return c;
  }

  /**
   * Appends a claim. Amortized O(1) (so is {@link #pollFirst}, which halves the arrays below a quarter full).
   *
   * @param c a claim whose lease ends no earlier than the last one's (not checked)
   * @return the entry's sequence number, for {@link #detach}
   */
  long addLast(Claim c) {
    if (size == claims.length) {
      resize(claims.length * 2);
    }
    int i = index(size);
    leaseEnds[i] = c.leaseEndMs;
    idFps[i] = c.idFp;
    tokens[i] = c.tokenValue;
    committed[i] = false;
    claims[i] = c;
    size++;
    return headSeq + size - 1;
  }

  /**
   * The claim of an entry is no longer live: the entry drops it (unless {@code keepClaim}) and keeps its numbers
   * until its lease end. O(1). An entry that already left the queue (its lease ended) is ignored.
   *
   * @param seq the entry's sequence number, from {@link #addLast}
   * @param wasCommitted true if the claim was committed: {@link #findCommitted} then finds it until its lease ends
   * @param keepClaim true to keep the claim object for {@link #pollFirst} at lease end
   */
  void detach(long seq, boolean wasCommitted, boolean keepClaim) {
    long pos = seq - headSeq;
    if (pos < 0 || pos >= size) {
      return;
    }
    int i = index((int) pos);
    committed[i] = wasCommitted;
    if (!keepClaim) {
      claims[i] = null;
    }
  }

  /**
   * Finds a committed claim by its lease end, id and token: a binary search for the lease end, then a scan of the
   * entries that share it. O(log n + entries with that lease end).
   *
   * @param leaseEndMs the claim's lease end, clock milliseconds
   * @param idFp the claim's id fingerprint
   * @param token the claim's token value
   * @return true if an entry with these three was committed ({@link #detach} with {@code wasCommitted})
   */
  boolean findCommitted(long leaseEndMs, long idFp, long token) {
    int lo = 0;
    int hi = size;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (leaseEnds[index(mid)] < leaseEndMs) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (int k = lo; k < size; k++) {
      int i = index(k);
      if (leaseEnds[i] != leaseEndMs) {
        return false;
      }
      if (tokens[i] == token && idFps[i] == idFp) {
        return committed[i];
      }
    }
    return false;
  }

  /** @return the number of entries that still hold their claim object; for tests */
  int claimsHeld() {
    int n = 0;
    for (int k = 0; k < size; k++) {
      if (claims[index(k)] != null) {
        n++;
      }
    }
    return n;
  }

  private int index(int k) {
    return (head + k) & (claims.length - 1);
  }

  /** @return the slots the arrays have now; for tests */
  int capacity() {
    return claims.length;
  }

  /** Copies the entries, in order from index 0, into arrays of {@code n} slots ({@code n >= size}, a power of 2). */
  private void resize(int n) {
    long[] l = new long[n];
    long[] f = new long[n];
    long[] t = new long[n];
    boolean[] d = new boolean[n];
    Claim[] c = new Claim[n];
    for (int k = 0; k < size; k++) {
      int i = index(k);
      l[k] = leaseEnds[i];
      f[k] = idFps[i];
      t[k] = tokens[i];
      d[k] = committed[i];
      c[k] = claims[i];
    }
    leaseEnds = l;
    idFps = f;
    tokens = t;
    committed = d;
    claims = c;
    head = 0;
  }
}
