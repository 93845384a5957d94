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
import io.github.vertxdedup.window.DedupWindow;
import io.github.vertxdedup.time.ManualClock;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The lease queue that keeps committed, released and expired claims as numbers ({@link ClaimQueue}) against a model
 * of every token ever issued: repeated commits and releases with any earlier token of an id (live, committed, released,
 * expired, restored, upper-cased), restored claims, releaseClaimsOf, bursts that grow the queue after its head moved,
 * and the number of claim objects the queue still holds.
 */
class ClaimQueueModelPropertyTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final long LEASE_MS = 30_000;
  private static final DedupOptions OPTIONS = new DedupOptions().setWindowMs(3_600_000).setBucketMs(60_000)
      .setLeaseMs(LEASE_MS).validate();
  private static final long[] LEASES = {0, 5_000, 30_000, 90_000};
  private static final String[] CLAIMERS = {null, "a", "b"};

  enum State { LIVE, COMMITTED, RELEASED, EXPIRED }

  /** One token ever issued (or restored). */
  static final class Tok {
    final String id;
    final String text;
    final long leaseEndMs;
    final String claimer;
    final boolean inQueue;
    final boolean indexed;
    State state = State.LIVE;
    boolean polled;

    Tok(String id, String text, long leaseEndMs, String claimer, boolean inQueue, boolean indexed) {
      this.id = id;
      this.text = text;
      this.leaseEndMs = leaseEndMs;
      this.claimer = claimer;
      this.inQueue = inQueue;
      this.indexed = indexed;
    }

    @Override
    public String toString() {
      return id + "/" + text + "/" + leaseEndMs + "/" + state + (inQueue ? "/q" : "/late") + (indexed ? "/idx" : "");
    }
  }

  /**
   * op: 0 claim, 1 commit live, 2 repeat commit with an earlier token, 3 release live, 4 release with an earlier token,
   * 5 lookup, 6 advance, 7 sweep, 8 restore a claim of a new id, 9 releaseClaimsOf("a"), 10 burst of 40 claims,
   * 11 repeat commit with the upper-cased token.
   */
  record Step(int op, int id, int arg, int advanceMs) {}

  final class Model {
    final ManualClock clock = new ManualClock(T0);
    final PartitionCore core = new PartitionCore(OPTIONS, 0, clock, NoJournal.INSTANCE);
    final RequestDecoder decoder = new RequestDecoder(OPTIONS, 0);
    final List<String> ids = new ArrayList<>();
    final Map<String, Tok> live = new HashMap<>();
    final Map<String, Boolean> remembered = new HashMap<>();
    final Map<String, List<Tok>> issued = new HashMap<>();
    final ArrayDeque<Tok> queue = new ArrayDeque<>();
    long expired;
    int fresh;

    Model() {
      for (int i = 0; i < 8; i++) {
        ids.add("id-" + i);
      }
    }

    JsonObject event(String id) {
      JsonObject body = new JsonObject().put("id", id);
      if ((id.hashCode() & 1) == 0) {
        body.put("key", "key-" + id);
      }
      return body;
    }

    long now() {
      return clock.nowMs();
    }

    /** A request notices a lapsed live claim of id. */
    void noticeLapse(String id) {
      Tok t = live.get(id);
      if (t != null && t.leaseEndMs <= now()) {
        t.state = State.EXPIRED;
        live.remove(id);
        expired++;
      }
    }

    void append(Tok t) {
      issued.computeIfAbsent(t.id, k -> new ArrayList<>()).add(t);
      if (t.inQueue) {
        queue.addLast(t);
      }
    }

    boolean goesToQueue(long leaseEndMs) {
      return queue.isEmpty() || leaseEndMs >= queue.peekLast().leaseEndMs;
    }

    void claim(String id, int leaseIdx, String claimer, Object step) {
      JsonObject body = event(id);
      if (LEASES[leaseIdx] != 0) {
        body.put("leaseMs", LEASES[leaseIdx]);
      }
      if (claimer != null) {
        body.put("claimer", claimer);
      }
      DedupResult r = core.claim(decoder.decode(body, DedupAction.CLAIM, now(), -1));
      noticeLapse(id);
      if (live.containsKey(id)) {
        assertThat(r.verdict()).as("%s held", step).isEqualTo(DedupVerdict.IN_FLIGHT);
      } else if (remembered.getOrDefault(id, false)) {
        assertThat(r.verdict()).as("%s remembered", step).isEqualTo(DedupVerdict.DUPLICATE);
      } else {
        assertThat(r.verdict()).as("%s", step).isEqualTo(DedupVerdict.ACCEPTED);
        long lease = LEASES[leaseIdx] != 0 ? LEASES[leaseIdx] : LEASE_MS;
        long end = now() + lease;
        boolean q = goesToQueue(end);
        Tok t = new Tok(id, r.claimToken(), end, claimer, q, q && lease == LEASE_MS);
        append(t);
        live.put(id, t);
      }
    }

    void commitLive(String id, Object step) {
      Tok t = live.get(id);
      if (t == null) {
        return;
      }
      ParsedEvent e = decoder.decode(event(id).put("claimToken", t.text), DedupAction.COMMIT, now(), -1);
      if (t.leaseEndMs <= now()) {
        assertConflict(() -> core.commit(e), step);
        noticeLapse(id);
      } else {
        assertThat(core.commit(e).verdict()).as("%s", step).isEqualTo(DedupVerdict.COMMITTED);
        t.state = State.COMMITTED;
        live.remove(id);
        remembered.put(id, true);
      }
    }

    void releaseLive(String id, Object step) {
      Tok t = live.get(id);
      if (t == null) {
        return;
      }
      ParsedEvent e = decoder.decode(event(id).put("claimToken", t.text), DedupAction.RELEASE, now(), -1);
      if (t.leaseEndMs <= now()) {
        assertConflict(() -> core.release(e), step);
        noticeLapse(id);
      } else {
        assertThat(core.release(e).verdict()).as("%s", step).isEqualTo(DedupVerdict.RELEASED);
        t.state = State.RELEASED;
        live.remove(id);
      }
    }

    /** A commit or release with an earlier token of id that is not its live claim. */
    void repeat(String id, int pick, boolean commit, boolean upper, Object step) {
      List<Tok> all = issued.get(id);
      if (all == null) {
        return;
      }
      Tok t = all.get(pick % all.size());
      if (t.state == State.LIVE) {
        return;
      }
      String text = upper ? t.text.toUpperCase(Locale.ROOT) : t.text;
      if (upper && text.equals(t.text)) {
        return;
      }
      ParsedEvent e = decoder.decode(event(id).put("claimToken", text),
          commit ? DedupAction.COMMIT : DedupAction.RELEASE, now(), -1);
      Tok cur = live.get(id);
      boolean answersCommitted = cur == null && commit && !upper && t.state == State.COMMITTED
          && t.leaseEndMs > now();
      Object what = step + " with " + t + (upper ? " upper-cased" : "") + " (live " + cur + ")";
      if (answersCommitted) {
        assertThat(core.commit(e).verdict()).as("%s", what).isEqualTo(DedupVerdict.COMMITTED);
      } else if (commit) {
        assertConflict(() -> core.commit(e), what);
      } else {
        RequestFailure f = assertConflict(() -> core.release(e), what);
        if (cur == null && t.state == State.COMMITTED && t.leaseEndMs > now()) {
          assertThat(f.getMessage()).as("%s", what).contains("was committed");
        }
      }
      noticeLapse(id);
    }

    void lookup(String id, Object step) {
      String state = core.lookup(decoder.decode(event(id), DedupAction.LOOKUP, now(), -1)).state().name();
      noticeLapse(id);
      assertThat(state).as("%s", step).isEqualTo(live.containsKey(id) ? "IN_FLIGHT"
          : remembered.getOrDefault(id, false) ? "REMEMBERED" : "ABSENT");
    }

    void sweep(Object step) {
      long now = now();
      int lapsedNow = 0;
      for (Tok t : new ArrayList<>(live.values())) {
        if (t.leaseEndMs <= now) {
          t.state = State.EXPIRED;
          live.remove(t.id);
          lapsedNow++;
        }
      }
      assertThat(core.sweepExpiredLeases()).as("%s: claims forgotten", step).isEqualTo(lapsedNow);
      expired += lapsedNow;
      while (!queue.isEmpty() && queue.peekFirst().leaseEndMs <= now) {
        queue.pollFirst().polled = true;
      }
      assertThat(core.claimsHeld()).as("%s: claims held", step).isEqualTo(live.size());
    }

    void restore(int arg, int leaseMs, Object step) {
      String id = "restored-" + fresh++;
      long end = now() + 1 + leaseMs;
      String text = (arg & 1) == 0
          ? Long.toHexString(Long.MIN_VALUE | end << ClaimTokens.TOKEN_SEQUENCE_BITS | (arg & 0xffff))
          : Long.toHexString(Long.MIN_VALUE | (0x5eedL * (arg + 7) * 0x9E3779B97F4A7C15L));
      ParsedEvent e = decoder.decode(event(id), DedupAction.LOOKUP, now(), -1);
      String claimer = CLAIMERS[arg % 3];
      core.restoreClaim(e.idFp, e.keyFp, DedupWindow.NO_PAYLOAD_HASH, text, now() - 1, end,
          DedupWindow.DEFAULT_REMEMBER_UNTIL, claimer);
      Tok t = new Tok(id, text, end, claimer, goesToQueue(end), false);
      append(t);
      live.put(id, t);
      ids.add(id);
    }

    void releaseClaimsOf(Object step) {
      int released = 0;
      for (Tok t : new ArrayList<>(live.values())) {
        if ("a".equals(t.claimer)) {
          if (t.leaseEndMs <= now()) {
            t.state = State.EXPIRED;
            expired++;
          } else {
            t.state = State.RELEASED;
            released++;
          }
          live.remove(t.id);
        }
      }
      assertThat(core.releaseClaimsOf("a")).as("%s", step).isEqualTo(released);
    }

    void burst(Object step) {
      List<String> mine = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        String id = "burst-" + fresh++;
        ids.add(id);
        mine.add(id);
        claim(id, 0, i % 4 == 0 ? "a" : null, step);
      }
      for (int i = 0; i < mine.size(); i++) {
        if (i % 3 == 0) {
          commitLive(mine.get(i), step);
        } else if (i % 3 == 1) {
          releaseLive(mine.get(i), step);
        }
      }
    }

    void checkInvariants(Object step) {
      assertThat(core.statsJson().getLong("expiredLeases")).as("after %s", step).isEqualTo(expired);
      long held = queue.stream().filter(t -> t.state == State.LIVE || (t.state == State.COMMITTED && !t.indexed))
          .count();
      assertThat(core.claims().queuedClaimObjects()).as("claim objects the queue holds after %s: %s", step, queue)
          .isEqualTo((int) held);
    }
  }

  @Property(tries = 500)
  void shouldAnswerEveryTokenAsTheModelDoes(@ForAll("steps") List<Step> steps) {
    Model m = new Model();
    for (Step s : steps) {
      String id = m.ids.get(s.id() % m.ids.size());
      switch (s.op()) {
        case 0 -> m.claim(id, s.arg() % LEASES.length, CLAIMERS[s.arg() % 3], s);
        case 1 -> m.commitLive(id, s);
        case 2 -> m.repeat(id, s.arg(), true, false, s);
        case 3 -> m.releaseLive(id, s);
        case 4 -> m.repeat(id, s.arg(), false, false, s);
        case 5 -> m.lookup(id, s);
        case 6 -> m.clock.advanceMs(s.advanceMs());
        case 7 -> m.sweep(s);
        case 8 -> m.restore(s.arg(), s.advanceMs() * 3, s);
        case 9 -> m.releaseClaimsOf(s);
        case 10 -> m.burst(s);
        default -> m.repeat(id, s.arg(), true, true, s);
      }
      m.checkInvariants(s);
    }
  }

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Step> step = Combinators.combine(
        Arbitraries.integers().between(0, 11),
        Arbitraries.integers().between(0, 1_000),
        Arbitraries.integers().between(0, 1_000),
        Arbitraries.integers().between(0, 25_000))
        .as(Step::new);
    return step.list().ofMaxSize(110);
  }

  private static RequestFailure assertConflict(Runnable call, Object step) {
    RequestFailure f = catchThrowableOfType(call::run, RequestFailure.class);
    assertThat(f).as("%s", step).isNotNull();
    assertThat(f.code()).as("%s", step).isEqualTo(DedupFailure.STATE_CONFLICT);
    return f;
  }
}
