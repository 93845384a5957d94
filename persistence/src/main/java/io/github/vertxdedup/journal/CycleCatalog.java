package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;
import static io.github.vertxdedup.journal.RecordFormat.UNKNOWN_EXPIRY;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/*
 * What the journal knows about each cycle file on disk: the latest expiry of any accept or commit in it (claims
 * do not count: an open claim is carried into each new cycle) and whether it starts with a complete roll snapshot
 * (ROLL ... SNAPSHOT_END).
 *
 * Where replay starts, and so what retention may delete: walk the cycles oldest first and stop at the first one
 * that may still hold a live entry (its max expiry is after now, or unknown), never past the newest cycle (it holds
 * the latest offsets and claims); then step back to the nearest cycle that starts with a complete snapshot (or to
 * the oldest cycle), because a cycle's snapshot is what carries the claims and offsets of every cycle before it.
 * Every cycle before that start is unneeded: all its accepts and commits have expired, and its claims and offsets
 * were carried forward.
 *
 * A cycle's max expiry comes from the ROLL record at the start of the next cycle (written by the appender when it
 * rolled), from a replay that read the cycle whole, or from the appender itself for the cycle it rolls out of. An
 * unknown max counts as "may be live": it costs disk, never ids.
 *
 * Thread-safe (synchronized): the appender updates it at a roll, retention reads it from another thread.
 */
final class CycleCatalog {

  static final int NONE = -1;

  private static final class Entry {
    long maxExpiry = UNKNOWN_EXPIRY;
    boolean snapshotComplete;
  }

  private final TreeMap<Integer, Entry> cycles = new TreeMap<>();

  synchronized void present(int cycle) {
    cycles.computeIfAbsent(cycle, c -> new Entry());
  }

  /** A cycle the appender just started: empty so far, its snapshot complete. */
  synchronized void started(int cycle) {
    Entry e = cycles.get(cycle);
    if (e == null) {
      e = new Entry();
      e.maxExpiry = NO_EXPIRY;
      cycles.put(cycle, e);
    }
    e.snapshotComplete = true;
  }

  /** A ROLL record's summary of the cycle before it. */
  synchronized void summary(int cycle, long maxExpiry) {
    Entry e = cycles.get(cycle);
    if (e == null || maxExpiry == UNKNOWN_EXPIRY) {
      return;
    }
    e.maxExpiry = e.maxExpiry == UNKNOWN_EXPIRY ? maxExpiry : Math.max(e.maxExpiry, maxExpiry);
  }

  /** The exact max expiry of a cycle read whole (or written whole by the appender). */
  synchronized void exact(int cycle, long maxExpiry) {
    Entry e = cycles.get(cycle);
    if (e != null) {
      e.maxExpiry = maxExpiry;
    }
  }

  synchronized void snapshotComplete(int cycle) {
    Entry e = cycles.get(cycle);
    if (e != null) {
      e.snapshotComplete = true;
    }
  }

  synchronized boolean isSnapshotComplete(int cycle) {
    Entry e = cycles.get(cycle);
    return e != null && e.snapshotComplete;
  }

  synchronized long maxExpiry(int cycle) {
    Entry e = cycles.get(cycle);
    return e == null ? UNKNOWN_EXPIRY : e.maxExpiry;
  }

  synchronized void removed(int cycle) {
    cycles.remove(cycle);
  }

  synchronized int newest() {
    return cycles.isEmpty() ? NONE : cycles.lastKey();
  }

  synchronized int oldest() {
    return cycles.isEmpty() ? NONE : cycles.firstKey();
  }

  synchronized int newestBefore(int cycle) {
    Integer k = cycles.lowerKey(cycle);
    return k == null ? NONE : k;
  }

  synchronized int size() {
    return cycles.size();
  }

  synchronized List<Integer> list() {
    return new ArrayList<>(cycles.keySet());
  }

  /** The oldest cycle a replay at {@code nowMs} must read; see the class comment. */
  synchronized int replayStart(long nowMs) {
    if (cycles.isEmpty()) {
      return NONE;
    }
    List<Map.Entry<Integer, Entry>> all = new ArrayList<>(cycles.entrySet());
    int i = 0;
    int last = all.size() - 1;
    while (i < last) {
      long max = all.get(i).getValue().maxExpiry;
      if (max == UNKNOWN_EXPIRY || max > nowMs) {
        break;
      }
      i++;
    }
    while (i > 0 && !all.get(i).getValue().snapshotComplete) {
      i--;
    }
    return all.get(i).getKey();
  }
}
