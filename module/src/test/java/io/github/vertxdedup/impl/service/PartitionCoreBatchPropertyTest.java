package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.EntryState;
import io.github.vertxdedup.UncoveredPolicy;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.protocol.ParsedEvent;
import io.github.vertxdedup.impl.protocol.RequestDecoder;
import io.github.vertxdedup.impl.protocol.RequestFailure;
import io.github.vertxdedup.window.CapacityPolicy;
import io.github.vertxdedup.time.ManualClock;
import io.github.vertxdedup.window.WindowFullException;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.statistics.Statistics;

/**
 * A batch gives the same results as single calls in order, whichever path (the window's batch check for plain
 * events, among them those whose event time the partition covers, the single path for the others) decides each
 * event.
 */
class PartitionCoreBatchPropertyTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final DedupOptions OPTIONS = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).validate();

  @Property(tries = 300)
  void shouldAnswerABatchLikeSingleChecksInOrder(@ForAll("rounds") @Size(min = 1, max = 6) List<List<JsonObject>> rounds,
      @ForAll @IntRange(min = 0, max = 40_000) int stepMs, @ForAll boolean acceptUncovered) {
    // Under ACCEPT (the Kafka consumer's policy) uncovered events join the batch check's runs too.
    DedupOptions options = acceptUncovered
        ? new DedupOptions(OPTIONS).setUncoveredPolicy(UncoveredPolicy.ACCEPT).validate() : OPTIONS;
    ManualClock batchClock = new ManualClock(T0);
    ManualClock singleClock = new ManualClock(T0);
    PartitionCore batched = new PartitionCore(options, 0, batchClock, NoJournal.INSTANCE);
    PartitionCore single = new PartitionCore(options, 0, singleClock, NoJournal.INSTANCE);
    RequestDecoder decoder = new RequestDecoder(options, 0);
    for (List<JsonObject> round : rounds) {
      List<ParsedEvent> events = new ArrayList<>();
      for (JsonObject json : round) {
        events.add(decoder.decode(json, DedupAction.CHECK, batchClock.nowMs(), -1));
      }
      DedupBatchResult[] fromBatch = batched.batch(events.toArray(new ParsedEvent[0]), false);
      for (int i = 0; i < events.size(); i++) {
        assertThat(fromBatch[i].result()).as("event %d: %s", i, round.get(i)).isEqualTo(single.check(events.get(i)));
      }
      batchClock.advanceMs(stepMs);
      singleClock.advanceMs(stepMs);
    }
    assertThat(batched.statsJson()).isEqualTo(single.statsJson());
  }

  /**
   * Under {@code REJECT} with a few entries of room, check and claim batches (claims lapsing as time passes): each
   * event gets what a single call in order gets, its verdict or its 503, and an event whose id or key is remembered
   * or claimed is always answered, never refused: only a new event needs room.
   */
  @Property(tries = 300)
  void shouldAnswerABatchOnAFullWindowLikeSingleCallsInOrder(
      @ForAll("rounds") @Size(min = 1, max = 6) List<List<JsonObject>> rounds,
      @ForAll @Size(min = 6, max = 6) List<Boolean> claimRounds,
      @ForAll @IntRange(min = 0, max = 8_000) int stepMs) {
    DedupOptions options = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).setLeaseMs(5_000)
        .setMaxIdsPerPartition(6).setCapacityPolicy(CapacityPolicy.REJECT).validate();
    ManualClock batchClock = new ManualClock(T0);
    ManualClock singleClock = new ManualClock(T0);
    PartitionCore batched = new PartitionCore(options, 0, batchClock, NoJournal.INSTANCE);
    PartitionCore single = new PartitionCore(options, 0, singleClock, NoJournal.INSTANCE);
    RequestDecoder decoder = new RequestDecoder(options, 0);
    int refused = 0;
    for (int r = 0; r < rounds.size(); r++) {
      List<JsonObject> round = rounds.get(r);
      boolean claims = claimRounds.get(r);
      DedupAction action = claims ? DedupAction.CLAIM : DedupAction.CHECK;
      List<ParsedEvent> events = new ArrayList<>();
      for (JsonObject json : round) {
        events.add(decoder.decode(json, action, batchClock.nowMs(), -1));
      }
      Object[] fromBatch = outcomes(batched, events.toArray(new ParsedEvent[0]), claims);
      for (int i = 0; i < events.size(); i++) {
        ParsedEvent e = events.get(i);
        EntryState before = single.lookup(e).state();
        Object expected;
        try {
          expected = claims ? single.claim(e) : single.check(e);
        } catch (RequestFailure f) {
          expected = f.code();
        } catch (WindowFullException f) {
          expected = DedupFailure.UNAVAILABLE;
        }
        assertThat(withoutToken(fromBatch[i])).as("round %d, event %d: %s", r, i, round.get(i))
            .isEqualTo(withoutToken(expected));
        if (expected instanceof Integer) {
          refused++;
          assertThat(before).as("refused, so new: %s", round.get(i)).isEqualTo(EntryState.ABSENT);
        }
      }
      batchClock.advanceMs(stepMs);
      singleClock.advanceMs(stepMs);
    }
    assertThat(batched.statsJson()).isEqualTo(single.statsJson());
    Statistics.collect(refused > 0 ? "some refused" : "none refused");
  }

  /** Claim tokens differ between two cores (a random start): a result with one compares as "token". */
  private static Object withoutToken(Object outcome) {
    if (outcome instanceof DedupResult d && d.claimToken() != null) {
      return new DedupResult(d.verdict(), d.partition(), "token", d.firstSeenMs(), d.ageMs(), d.expiresAtMs(),
          d.uncovered());
    }
    return outcome;
  }

  /** Decides a batch: per event its DedupResult, or its failure code. */
  private static Object[] outcomes(PartitionCore core, ParsedEvent[] events, boolean claims) {
    DedupBatchResult[] results = core.batch(events, claims);
    Object[] out = new Object[results.length];
    for (int i = 0; i < results.length; i++) {
      out[i] = results[i].succeeded() ? results[i].result() : (Object) results[i].failureCode();
    }
    return out;
  }

  /**
   * Event times relative to {@code T0}, the partition's start: before it (uncovered), at it, after it, more than the
   * window (60 s) later, and far in the future (counts as now). The clock moves on between rounds, so the same times
   * become late.
   */
  private static final long[] EVENT_TIMES = {-70_000, -1, 0, 5_000, 90_000, Long.MAX_VALUE - T0};

  @Provide
  Arbitrary<List<List<JsonObject>>> rounds() {
    Arbitrary<JsonObject> event = Combinators.combine(
        Arbitraries.integers().between(0, 30),
        Arbitraries.integers().between(0, 9),
        Arbitraries.integers().between(0, 9),
        Arbitraries.integers().between(-EVENT_TIMES.length, EVENT_TIMES.length - 1))
        .as((id, key, hash, time) -> {
          JsonObject json = new JsonObject().put("id", "id-" + id);
          if (key == 0) {
            json.put("key", "key-" + (id % 7));
          }
          if (hash == 0) {
            json.put("payloadHash", "h" + (id % 2));
          }
          if (time >= 0) { // about half of the events carry an event time
            json.put("eventTimeMs", T0 + EVENT_TIMES[time]);
          }
          return json;
        });
    return event.list().ofMaxSize(60).list();
  }
}
