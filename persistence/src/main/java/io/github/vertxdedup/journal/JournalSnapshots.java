package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.JournalQueue.LOG;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.channels.FileChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Stream;
import net.openhft.chronicle.queue.ExcerptTailer;

/*
 * The window snapshots of a journal: files beside the cycle files, each standing for the records up to a journal
 * position (SnapshotFile has the format). A restart loads the newest usable one and replays only the records after
 * it; a new one is written from the newest usable one and the records after it, on a worker, beside the writer.
 *
 * The journal stays the source of truth: retention deletes cycle files exactly as without snapshots (only expired
 * ones), so a snapshot that is damaged, missing or stale costs replay time, never an id. A snapshot is usable when
 * its checksums and totals hold, it was written under this roll cycle and owner key, and its position lies in a cycle
 * at or after the one a full replay would start from (an older one would need records retention may have deleted,
 * and replaying from the full start reads less anyway). Otherwise the next older one is tried, then the full replay.
 *
 * Snapshots kept: the newest KEEP (the previous one is the fallback of the newest); older ones, temporary files a
 * crash left and snapshots no replay could use are deleted after each new snapshot.
 *
 * Threads: write() and retention passes are serialised by the caller (Journal); load() runs at replay, before the
 * first append.
 */
final class JournalSnapshots {

  /** Snapshots kept after a new one is written: it and the one before, its fallback. */
  static final int KEEP = 2;

  private final JournalQueue q;

  JournalSnapshots(JournalQueue q) {
    this.q = q;
  }

  /** Deletes the temporary files of snapshots a crash interrupted. At open, under the directory lock. */
  void removeTemporaryFiles() {
    for (Path p : list(SnapshotFile.TEMP_SUFFIX)) {
      try {
        Files.deleteIfExists(p);
        LOG.info("journal {}: deleted {}, a snapshot whose writing was interrupted", q.dir, p.getFileName());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot delete the unfinished snapshot " + p, e);
      }
    }
  }

  /** The snapshot files, newest (highest position) first. */
  List<Path> snapshots() {
    List<Path> all = new ArrayList<>();
    for (Path p : list(SnapshotFile.SUFFIX)) {
      if (SnapshotFile.positionOf(p.getFileName().toString()) != Journal.NO_INDEX) {
        all.add(p);
      }
    }
    all.sort(Comparator.comparingLong((Path p) -> SnapshotFile.positionOf(p.getFileName().toString())).reversed());
    return all;
  }

  private List<Path> list(String suffix) {
    try (Stream<Path> s = Files.list(q.dir)) {
      return s.filter(p -> {
        String n = p.getFileName().toString();
        return n.startsWith(SnapshotFile.PREFIX) && n.endsWith(suffix)
            && (suffix.equals(SnapshotFile.TEMP_SUFFIX) || !n.endsWith(SnapshotFile.TEMP_SUFFIX));
      }).toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the journal directory " + q.dir, e);
    }
  }

  /**
   * The newest usable snapshot at {@code nowMs} (see the class comment), checked whole, or null if none is: then a
   * full replay. Each unusable one is logged with the reason.
   */
  SnapshotFile.Loaded newestUsable(long ownerKey, long nowMs) {
    int start = q.catalog.replayStart(nowMs);
    if (start == CycleCatalog.NONE) {
      return null;
    }
    for (Path p : snapshots()) {
      long position = SnapshotFile.positionOf(p.getFileName().toString());
      int cycle = q.rollCycle.toCycle(position);
      if (cycle < start) {
        LOG.info("journal {}: snapshot {} is older than the oldest cycle a replay reads ({}); not used",
            q.dir, p.getFileName(), q.fileOf(start).getName());
        return null; // the older ones are older still
      }
      if (cycle > q.catalog.newest()) {
        LOG.warn("journal {}: snapshot {} covers a cycle the journal does not hold; not used", q.dir,
            p.getFileName());
        continue;
      }
      try {
        SnapshotFile.Loaded l = SnapshotFile.check(p, q.cycleMs, ownerKey);
        if (l.position() != position) {
          throw new SnapshotFile.Damaged("its header names position " + Long.toHexString(l.position()));
        }
        try (ExcerptTailer t = q.queue.createTailer()) {
          if (!t.moveToIndex(position)) {
            throw new SnapshotFile.Damaged("the journal no longer holds the record at its position");
          }
        }
        return l;
      } catch (SnapshotFile.Damaged e) {
        LOG.warn("journal {}: snapshot {} cannot be used ({}); trying the one before it, or the whole journal",
            q.dir, p.getFileName(), e.getMessage());
      }
    }
    return null;
  }

  /** See {@link Journal#writeSnapshot}. */
  SnapshotResult write(JournalReader reader, long ownerKey, Function<SnapshotOutput, SnapshotCompaction> compaction,
      BooleanSupplier abort) {
    long startNanos = System.nanoTime();
    long nowMs = q.time.now();
    SnapshotFile.Loaded base = newestUsable(ownerKey, nowMs);
    int start = base != null ? q.rollCycle.toCycle(base.position()) : q.catalog.replayStart(nowMs);
    if (start == CycleCatalog.NONE) {
      return null;
    }
    String tempName = SnapshotFile.PREFIX + Long.toHexString(System.nanoTime());
    Path temp = q.dir.resolve(tempName + SnapshotFile.TEMP_SUFFIX);
    boolean done = false;
    SortingOutput sorted = null;
    try (SnapshotFileWriter w = new SnapshotFileWriter(temp)) {
      sorted = new SortingOutput(w, q.dir, tempName, SortingOutput.RUN);
      SnapshotCompaction c = compaction.apply(sorted);
      JournalVisitor v = c.visitor();
      RecordDecoder d = new RecordDecoder();
      d.nowMs = nowMs;
      JournalReader.Tail tail = new JournalReader.Tail(d, false);
      if (base != null) {
        base.deliver(v);
        tail.baseMax = base.cycleMaxExpiry();
      }
      long after = base != null ? base.position() : Journal.NO_INDEX;
      if (!reader.read(start, after, v, tail, null, abort)) {
        return null;
      }
      long position = tail.lastIndex != Journal.NO_INDEX ? tail.lastIndex : after;
      if (position == Journal.NO_INDEX || (base != null && position == base.position())) {
        return null; // nothing new since the newest snapshot (or nothing at all)
      }
      c.finish();
      sorted.drain();
      // The latest expiry per cycle up to the position: the base's, then what the tail read (it merged the base's
      // value into the cycle it resumed in). Cycles before the replay start are dropped: no replay reads them.
      TreeMap<Integer, Long> cycleMax = new TreeMap<>(tail.baseMax);
      cycleMax.putAll(tail.cycleMax);
      int keepFrom = q.catalog.replayStart(nowMs);
      cycleMax.headMap(keepFrom).clear();
      long bytes = w.finish(position, q.cycleMs, ownerKey, nowMs, cycleMax);
      long entries = w.entries();
      long claims = w.claims();
      w.close();
      Path target = q.dir.resolve(SnapshotFile.name(position));
      try {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
      }
      forceDirectory();
      done = true;
      int deleted = deleteOld(target, keepFrom);
      return new SnapshotResult(position, entries, claims, tail.records, base != null ? base.position()
          : Journal.NO_INDEX, bytes, deleted, Duration.ofNanos(System.nanoTime() - startNanos));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write a snapshot of journal " + q.dir, e);
    } finally {
      if (sorted != null) {
        sorted.deleteRuns();
      }
      if (!done) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException e) {
          LOG.warn("journal " + q.dir + ": cannot delete the unfinished snapshot " + temp, e);
        }
      }
    }
  }

  /**
   * Keeps the newest {@link #KEEP} snapshots (the one just written among them) and deletes the others, and any
   * whose position lies before cycle {@code keepFrom} (no replay could use it).
   */
  private int deleteOld(Path newest, int keepFrom) {
    int kept = 0;
    int deleted = 0;
    for (Path p : snapshots()) {
      long position = SnapshotFile.positionOf(p.getFileName().toString());
      if (kept < KEEP && q.rollCycle.toCycle(position) >= keepFrom) {
        kept++;
        continue;
      }
      if (p.equals(newest)) {
        continue;
      }
      try {
        Files.deleteIfExists(p);
        deleted++;
      } catch (IOException e) {
        LOG.warn("journal " + q.dir + ": cannot delete the old snapshot " + p, e);
      }
    }
    return deleted;
  }

  /** Deletes the snapshots no replay at {@code nowMs} could use: positions before the replay start. */
  int deleteStale(long nowMs) {
    int start = q.catalog.replayStart(nowMs);
    int deleted = 0;
    if (start == CycleCatalog.NONE) {
      return 0;
    }
    for (Path p : snapshots()) {
      if (q.rollCycle.toCycle(SnapshotFile.positionOf(p.getFileName().toString())) < start) {
        try {
          Files.deleteIfExists(p);
          deleted++;
        } catch (IOException e) {
          LOG.warn("journal " + q.dir + ": cannot delete the stale snapshot " + p, e);
        }
      }
    }
    return deleted;
  }

  private void forceDirectory() {
    try (FileChannel ch = FileChannel.open(q.dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some file systems do not let a directory be opened for fsync; the rename is then as durable as they make it.
      LOG.debug("journal {}: cannot fsync the directory after a snapshot: {}", q.dir, e.toString());
    }
  }
}
