package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link ClaimQueue} alone against an ArrayDeque model: detach by sequence number across grow() with a moved head. */
class ClaimQueueDirectTest {

  private static Claim claim(long idFp, long leaseEnd, long token) {
    return new Claim(idFp, 0, 0, Long.MIN_VALUE, Long.toHexString(token), token, true, 0, leaseEnd, null);
  }

  record E(long seq, Claim c, boolean[] committed, boolean[] kept) {}

  @Test
  void shouldDetachTheEntryItsSequenceNamesAcrossGrowAndMovedHead() {
    Random rnd = new Random(42);
    ClaimQueue q = new ClaimQueue();
    ArrayDeque<E> model = new ArrayDeque<>();
    List<E> everything = new ArrayList<>();
    long lease = 1000;
    long token = Long.MIN_VALUE;
    for (int round = 0; round < 20_000; round++) {
      int op = rnd.nextInt(10);
      if (op < 5) {
        lease += rnd.nextInt(3);
        Claim c = claim(rnd.nextInt(50), lease, ++token);
        long seq = q.addLast(c);
        E e = new E(seq, c, new boolean[1], new boolean[] {true});
        model.addLast(e);
        everything.add(e);
      } else if (op < 8 && !everything.isEmpty()) {
        E e = everything.get(rnd.nextInt(everything.size()));
        boolean com = rnd.nextBoolean();
        boolean keep = rnd.nextBoolean();
        q.detach(e.seq(), com, keep);
        if (model.contains(e)) {
          e.committed()[0] = com;
          e.kept()[0] = e.kept()[0] && keep;
        }
      } else if (!model.isEmpty()) {
        int n = rnd.nextInt(4);
        for (int i = 0; i < n && !model.isEmpty(); i++) {
          E e = model.pollFirst();
          assertThat(q.firstLeaseEndMs()).isEqualTo(e.c().leaseEndMs);
          Claim got = q.pollFirst();
          assertThat(got).isSameAs(e.kept()[0] ? e.c() : null);
        }
      }
      assertThat(q.size()).isEqualTo(model.size());
      assertThat(q.claimsHeld()).isEqualTo((int) model.stream().filter(e -> e.kept()[0]).count());
      if (!model.isEmpty()) {
        E probe = everything.get(rnd.nextInt(everything.size()));
        boolean queued = model.contains(probe);
        assertThat(q.findCommitted(probe.c().leaseEndMs, probe.c().idFp, probe.c().tokenValue))
            .isEqualTo(queued && probe.committed()[0]);
        assertThat(q.lastLeaseEndMs()).isEqualTo(model.peekLast().c().leaseEndMs);
      }
    }
  }

  /** A drained burst gives its capacity back: the arrays halve below a quarter full, down to the minimum. */
  @Test
  void shouldGiveBackTheCapacityOfABurstOnceItDrained() {
    ClaimQueue q = new ClaimQueue();
    for (int i = 0; i < 1_000_000; i++) {
      q.addLast(claim(i, 1000, Long.MIN_VALUE | i));
    }
    assertThat(q.capacity()).isEqualTo(1 << 20);
    for (int i = 0; i < 1_000_000 - 100; i++) {
      q.pollFirst();
    }
    assertThat(q.capacity()).as("100 entries left").isLessThanOrEqualTo(4 * 100).isGreaterThanOrEqualTo(100);
    assertThat(q.findCommitted(1000, 999_999, Long.MIN_VALUE | 999_999)).isFalse();
    assertThat(q.lastLeaseEndMs()).isEqualTo(1000);
    while (!q.isEmpty()) {
      q.pollFirst();
    }
    assertThat(q.capacity()).isEqualTo(ClaimQueue.MIN_CAPACITY);
  }
}
