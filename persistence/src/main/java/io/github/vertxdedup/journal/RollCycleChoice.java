package io.github.vertxdedup.journal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.rollcycles.LegacyRollCycles;
import net.openhft.chronicle.queue.rollcycles.TestRollCycles;

/**
 * The Chronicle roll cycles a journal may use, by length. Keeps Chronicle's types out of {@link JournalOptions}.
 * Among several Chronicle cycles of one length, the one with the largest excerpt capacity per cycle is used.
 *
 * <p>Only cycles whose file names Chronicle can turn back into a cycle number are listed: a journal must reopen.
 * Chronicle's {@code WEEKLY} cycle is left out on purpose: its files are named by week-based year and week
 * ({@code 2026W49.cq4}), and Chronicle 2026.4 cannot parse such a name back (listing the directory throws
 * {@code UnsupportedTemporalTypeException: Unsupported field: EpochDay}), so a weekly journal could be written but
 * never reopened. Longer windows use the daily cycle instead (see {@link #forWindow}).
 */
final class RollCycleChoice {

  private static final Map<Duration, RollCycle> BY_LENGTH;

  static {
    Map<Duration, RollCycle> m = new LinkedHashMap<>();
    // One second: for tests and short-window demos; dense indexing, 4 G excerpts per cycle.
    m.put(Duration.ofSeconds(1), TestRollCycles.TEST_SECONDLY);
    m.put(Duration.ofMinutes(1), LegacyRollCycles.MINUTELY);
    m.put(Duration.ofMinutes(5), RollCycles.FIVE_MINUTELY);
    m.put(Duration.ofMinutes(10), RollCycles.TEN_MINUTELY);
    m.put(Duration.ofMinutes(20), RollCycles.TWENTY_MINUTELY);
    m.put(Duration.ofMinutes(30), RollCycles.HALF_HOURLY);
    m.put(Duration.ofHours(1), RollCycles.FAST_HOURLY);
    m.put(Duration.ofHours(2), RollCycles.TWO_HOURLY);
    m.put(Duration.ofHours(4), RollCycles.FOUR_HOURLY);
    m.put(Duration.ofHours(6), RollCycles.SIX_HOURLY);
    m.put(Duration.ofDays(1), RollCycles.FAST_DAILY);
    // No WEEKLY: see the class comment.
    for (Map.Entry<Duration, RollCycle> e : m.entrySet()) {
      if (e.getValue().lengthInMillis() != e.getKey().toMillis()) {
        throw new ExceptionInInitializerError("roll cycle " + e.getValue() + " is not " + e.getKey());
      }
    }
    BY_LENGTH = Collections.unmodifiableMap(m);
  }

  private RollCycleChoice() {
  }

  static List<Duration> supported() {
    return Collections.unmodifiableList(new ArrayList<>(BY_LENGTH.keySet()));
  }

  static boolean isSupported(Duration length) {
    return BY_LENGTH.containsKey(length);
  }

  static RollCycle of(Duration length) {
    RollCycle cycle = BY_LENGTH.get(length);
    if (cycle == null) {
      throw new IllegalArgumentException("rollCycle must be one of " + BY_LENGTH.keySet() + " but was " + length);
    }
    return cycle;
  }

  /**
   * The shortest supported length of at least {@code window / 4} and a minute, or the longest one (a day) for a
   * window of more than 4 days. A 366-day window (the longest a dedup window may be) thus keeps about 367 daily
   * files plus the current one.
   */
  static Duration forWindow(Duration window) {
    Duration quarter = window.dividedBy(4);
    Duration last = null;
    for (Duration d : BY_LENGTH.keySet()) {
      last = d;
      if (d.compareTo(quarter) >= 0 && d.compareTo(Duration.ofMinutes(1)) >= 0) {
        return d;
      }
    }
    return last;
  }
}
