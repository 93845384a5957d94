package io.github.vertxdedup.impl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.window.ManualClock;
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

/**
 * A batch gives the same results as single calls in order, whichever path (the window's batch check for plain
 * events, among them those whose event time the partition vouches for, the single path for the others) decides each
 * event.
 */
class PartitionCoreBatchPropertyTest {

  private static final long T0 = 1_700_000_000_000L;
  private static final DedupOptions OPTIONS = new DedupOptions().setWindowMs(60_000).setBucketMs(1_000).validate();

  @Property(tries = 300)
  void shouldAnswerABatchLikeSingleChecksInOrder(@ForAll("rounds") @Size(min = 1, max = 6) List<List<JsonObject>> rounds,
      @ForAll @IntRange(min = 0, max = 40_000) int stepMs) {
    ManualClock batchClock = new ManualClock(T0);
    ManualClock singleClock = new ManualClock(T0);
    PartitionCore batched = new PartitionCore(OPTIONS, 0, batchClock, MemoryJournal.INSTANCE);
    PartitionCore single = new PartitionCore(OPTIONS, 0, singleClock, MemoryJournal.INSTANCE);
    RequestDecoder decoder = new RequestDecoder(OPTIONS, 0);
    for (List<JsonObject> round : rounds) {
      List<ParsedEvent> events = new ArrayList<>();
      for (JsonObject json : round) {
        events.add(decoder.decode(json, DedupAction.CHECK, batchClock.nowMs(), -1));
      }
      DedupResult[] fromBatch = batched.batch(events.toArray(new ParsedEvent[0]), false);
      for (int i = 0; i < events.size(); i++) {
        assertThat(fromBatch[i]).as("event %d: %s", i, round.get(i)).isEqualTo(single.check(events.get(i)));
      }
      batchClock.advanceMs(stepMs);
      singleClock.advanceMs(stepMs);
    }
    assertThat(batched.statsJson()).isEqualTo(single.statsJson());
  }

  /**
   * Event times relative to {@code T0}, the partition's start: before it (unvouched), at it, after it, more than the
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
