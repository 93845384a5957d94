package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The lease sweep ({@link PartitionCore#sweepExpiredLeases()}, which finds lapsed claims through a queue in lease-end
 * order) forgets exactly the claims and committed claims whose lease has ended, each lapsed claim counted once
 * whether the sweep or a request noticed it, under interleaved claims (default and per-request leases, shorter and
 * longer, so some are out of claim order), commits, repeated commits, releases, lookups and clock steps on a
 * {@link ManualClock}. The expected answers come from a model of the claim rules written out in this test.
 */
class LeaseSweepPropertyTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long LEASE_MS = 30_000;
  /** One hour: longer than any sequence below, so no committed id leaves the window during a try. */
  private static final DedupOptions OPTIONS = new DedupOptions().setWindowMs(3_600_000).setBucketMs(60_000)
      .setLeaseMs(LEASE_MS).validate();
  private static final long[] LEASES = {0, 5_000, 30_000, 90_000};

  /** One step: {@code op} 0 claim, 1 commit, 2 repeated commit, 3 release, 4 lookup, 5 advance the clock, 6 sweep. */
  record Step(int op, int id, int lease, int advanceMs) {}

  /** The model's view of one id. */
  private static final class Held {
    String token;
    long leaseEndMs;
    boolean committed;
    String committedToken;
    long committedLeaseEndMs;
  }

  @Property(tries = 400)
  void shouldForgetExactlyTheLapsedClaimsAndCountEachOnce(@ForAll("steps") List<Step> steps) {
    ManualClock clock = new ManualClock(T0);
    PartitionCore core = new PartitionCore(OPTIONS, 0, clock, NoJournal.INSTANCE);
    RequestDecoder decoder = new RequestDecoder(OPTIONS, 0);
    Map<Integer, Held> model = new HashMap<>();
    long expired = 0;
    for (Step s : steps) {
      long now = clock.nowMs();
      Held h = model.computeIfAbsent(s.id(), k -> new Held());
      String id = "id-" + s.id();
      boolean claimed = h.token != null;
      boolean lapsed = claimed && h.leaseEndMs <= now;
      switch (s.op()) {
        case 0 -> {
          JsonObject body = event(s.id());
          if (LEASES[s.lease()] != 0) {
            body.put("leaseMs", LEASES[s.lease()]);
          }
          DedupResult r = core.claim(decoder.decode(body, DedupAction.CLAIM, now, -1));
          if (lapsed) {
            expired++;
            h.token = null;
          }
          if (h.token != null) {
            assertThat(r.verdict()).as("%s held", s).isEqualTo(DedupVerdict.IN_FLIGHT);
          } else if (h.committed) {
            assertThat(r.verdict()).as("%s remembered", s).isEqualTo(DedupVerdict.DUPLICATE);
          } else {
            assertThat(r.verdict()).as("%s", s).isEqualTo(DedupVerdict.ACCEPTED);
            h.token = r.claimToken();
            h.leaseEndMs = now + (LEASES[s.lease()] != 0 ? LEASES[s.lease()] : LEASE_MS);
          }
        }
        case 1 -> {
          if (!claimed) {
            continue;
          }
          ParsedEvent e = decoder.decode(event(s.id()).put("claimToken", h.token), DedupAction.COMMIT, now, -1);
          if (lapsed) {
            assertConflict(() -> core.commit(e), s);
            expired++;
          } else {
            assertThat(core.commit(e).verdict()).as("%s", s).isEqualTo(DedupVerdict.COMMITTED);
            h.committed = true;
            h.committedToken = h.token;
            h.committedLeaseEndMs = h.leaseEndMs;
          }
          h.token = null;
        }
        case 2 -> {
          if (!h.committed || claimed) {
            continue;
          }
          ParsedEvent e = decoder.decode(event(s.id()).put("claimToken", h.committedToken), DedupAction.COMMIT,
              now, -1);
          if (h.committedLeaseEndMs > now) {
            assertThat(core.commit(e).verdict()).as("%s repeated within the lease", s)
                .isEqualTo(DedupVerdict.COMMITTED);
          } else {
            assertConflict(() -> core.commit(e), s);
          }
        }
        case 3 -> {
          if (!claimed) {
            continue;
          }
          ParsedEvent e = decoder.decode(event(s.id()).put("claimToken", h.token), DedupAction.RELEASE, now, -1);
          if (lapsed) {
            assertConflict(() -> core.release(e), s);
            expired++;
          } else {
            assertThat(core.release(e).verdict()).as("%s", s).isEqualTo(DedupVerdict.RELEASED);
          }
          h.token = null;
        }
        case 4 -> {
          String state = core.lookup(decoder.decode(event(s.id()), DedupAction.LOOKUP, now, -1)).state().name();
          if (lapsed) {
            expired++;
            h.token = null;
          }
          assertThat(state).as("%s", s)
              .isEqualTo(h.token != null ? "IN_FLIGHT" : h.committed ? "REMEMBERED" : "ABSENT");
        }
        case 5 -> clock.advanceMs(s.advanceMs());
        default -> {
          int lapsedNow = 0;
          for (Held m : model.values()) {
            if (m.token != null && m.leaseEndMs <= now) {
              m.token = null;
              lapsedNow++;
            }
          }
          assertThat(core.sweepExpiredLeases()).as("%s: claims forgotten", s).isEqualTo(lapsedNow);
          expired += lapsedNow;
          long live = model.values().stream().filter(m -> m.token != null).count();
          assertThat(core.claimsHeld()).as("%s: claims held after the sweep", s).isEqualTo((int) live);
        }
      }
      assertThat(core.statsJson().getLong("expiredLeases")).as("after %s", s).isEqualTo(expired);
    }
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Step> step = Combinators.combine(
        Arbitraries.integers().between(0, 6),
        Arbitraries.integers().between(0, 11),
        Arbitraries.integers().between(0, LEASES.length - 1),
        Arbitraries.integers().between(0, 25_000))
        .as(Step::new);
    return step.list().ofMaxSize(80);
  }

  /** Many claims of one lease length: one sweep per lease end forgets exactly those, none before, none twice. */
  @Test
  void shouldSweepClaimsInLeaseOrderAcrossCommitsAndReleases() {
    ManualClock clock = new ManualClock(T0);
    PartitionCore core = new PartitionCore(OPTIONS, 0, clock, NoJournal.INSTANCE);
    RequestDecoder decoder = new RequestDecoder(OPTIONS, 0);
    String[] tokens = new String[300];
    // Claim i at T0 + 100 i. Of each three: the first is committed and the second released when the third is
    // claimed; the third is left to its lease.
    for (int i = 0; i < 300; i++) {
      tokens[i] = core.claim(decoder.decode(event(i), DedupAction.CLAIM, clock.nowMs(), -1)).claimToken();
      if (i % 3 == 2) {
        core.commit(decoder.decode(event(i - 2).put("claimToken", tokens[i - 2]), DedupAction.COMMIT,
            clock.nowMs(), -1));
        core.release(decoder.decode(event(i - 1).put("claimToken", tokens[i - 1]), DedupAction.RELEASE,
            clock.nowMs(), -1));
      }
      clock.advanceMs(100);
    }
    assertThat(core.claimsHeld()).isEqualTo(100);
    // Claim i's lease ends at T0 + 100 i + LEASE_MS; the clock is at T0 + 30,000 = the lease end of claim 0.
    assertThat(clock.nowMs()).isEqualTo(T0 + LEASE_MS);
    assertThat(core.sweepExpiredLeases()).as("claim 0 was committed, so nothing live lapsed").isZero();
    clock.setMs(T0 + LEASE_MS + 100 * 149);
    assertThat(core.sweepExpiredLeases()).as("claims 2, 5, ..., 149").isEqualTo(50);
    assertThat(core.sweepExpiredLeases()).as("none twice").isZero();
    assertThat(core.claimsHeld()).isEqualTo(50);
    // A repeated commit is harmless while the committed claim's lease runs (claim 150, to T0 + 45,000), a conflict
    // once it has ended (claim 147, at T0 + 44,700).
    ParsedEvent again = decoder.decode(event(150).put("claimToken", tokens[150]), DedupAction.COMMIT,
        clock.nowMs(), -1);
    assertThat(core.commit(again).verdict()).isEqualTo(DedupVerdict.COMMITTED);
    ParsedEvent late = decoder.decode(event(147).put("claimToken", tokens[147]), DedupAction.COMMIT,
        clock.nowMs(), -1);
    assertConflict(() -> core.commit(late), "claim 147 committed, lease ended");
    clock.advanceMs(100 * 150);
    assertThat(core.sweepExpiredLeases()).isEqualTo(50);
    assertThat(core.claimsHeld()).isZero();
    assertThat(core.statsJson().getLong("expiredLeases")).isEqualTo(100);
  }

  private static JsonObject event(int id) {
    JsonObject body = new JsonObject().put("id", "id-" + id);
    if (id % 2 == 0) {
      body.put("key", "key-" + id);
    }
    return body;
  }

  private static void assertConflict(Runnable call, Object step) {
    RequestFailure f = catchThrowableOfType(call::run, RequestFailure.class);
    assertThat(f).as("%s", step).isNotNull();
    assertThat(f.code()).as("%s", step).isEqualTo(DedupFailure.STATE_CONFLICT);
  }
}
