package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.JournalQueue.LOG;
import static io.github.vertxdedup.journal.RecordFormat.CLAIM;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_CARRIED;
import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;
import static io.github.vertxdedup.journal.RecordFormat.OFFSETS;
import static io.github.vertxdedup.journal.RecordFormat.ROLL;
import static io.github.vertxdedup.journal.RecordFormat.SNAPSHOT_END;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.MappedBytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.Wires;

/**
 * The reading side of a {@link Journal}, Chronicle's tailer side: at open it repairs what a killed writer left at the
 * tail and reads the head of every cycle file into the {@link CycleCatalog}; {@link #replay} then delivers the
 * records from the oldest cycle that may still hold a live entry, decoded by {@link RecordDecoder}.
 *
 * <p>Threads: every method is blocking and runs off the event loop. {@link #removeUnfinishedCycleFiles},
 * {@link #scanCycles} and {@link #repairTail} run at open, under the directory lock and before the appender exists,
 * so no writer races them; {@link #replay} runs before the first append (the {@link Journal} enforces it).
 */
final class JournalReader {

  /** Replay checks the time for a progress report every this many records. */
  private static final int PROGRESS_CHECK_MASK = 255;
  private static final JournalVisitor IGNORE = new JournalVisitor() {
  };

  private final JournalQueue q;

  JournalReader(JournalQueue q) {
    this.q = q;
  }

  /*
   * A writer killed while it created a cycle file leaves a file whose first header (Chronicle's store header) never
   * got its "complete" mark. No record can be in it: Chronicle completes that header before the first excerpt. Yet
   * every open of that cycle would wait timeoutMS for the dead writer to finish it. Such a file is deleted before
   * the queue opens; the directory lock proves its writer is gone.
   */
  static void removeUnfinishedCycleFiles(Path dir) {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.list(dir)) {
      s.filter(p -> p.getFileName().toString().endsWith(SingleChronicleQueue.SUFFIX)).forEach(files::add);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the journal directory " + dir, e);
    }
    for (Path file : files) {
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
        ByteBuffer first = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        int n = ch.read(first, 0);
        int header = n == 4 ? first.getInt(0) : 0;
        if (header != 0 && (header & Wires.NOT_COMPLETE) == 0) {
          continue;
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the journal cycle file " + file, e);
      }
      try {
        Files.delete(file);
        LOG.warn("journal {}: deleted {}, a cycle file whose creation never finished "
            + "(its writer died creating it; it holds no record)", dir, file.getFileName());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot delete the unfinished journal cycle file " + file, e);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------- replay

  /**
   * Delivers the records to {@code visitor} in append order from the cycle the catalog names as the replay start;
   * see {@link Journal#replay}. Calls {@code onRead} once the last record was read, before the final progress report.
   */
  ReplayResult replay(JournalVisitor visitor, Runnable onRead) {
    return replayFrom(null, visitor, onRead);
  }

  /**
   * Delivers a snapshot's content (if {@code snapshot} is not null) and then the records after its position, or,
   * without a snapshot, the records from the catalog's replay start; see {@link Journal#replayFromSnapshot}.
   */
  ReplayResult replayFrom(SnapshotFile.Loaded snapshot, JournalVisitor visitor, Runnable onRead) {
    final long startNanos = System.nanoTime();
    final long nowMs = q.time.now();
    final CycleCatalog catalog = q.catalog;
    final int start = snapshot != null ? q.rollCycle.toCycle(snapshot.position())
        : catalog.replayStart(nowMs);
    final RecordDecoder d = new RecordDecoder();
    d.nowMs = nowMs;
    final Progress progress = new Progress(startNanos);
    int cyclesSkipped = 0;
    Tail tail = new Tail(d, true);
    if (snapshot != null) {
      snapshot.deliver(visitor);
      tail.baseMax = snapshot.cycleMaxExpiry();
    }
    if (start != CycleCatalog.NONE) {
      for (int c : catalog.list()) {
        if (c < start) {
          cyclesSkipped++;
        }
      }
      progress.total = estimateRecords(start);
      long after = snapshot != null ? snapshot.position() : Journal.NO_INDEX;
      read(start, after, visitor, tail, progress, () -> false);
    }
    onRead.run();
    progress.report(tail.records, d, true);
    return new ReplayResult(start, tail.cyclesRead, cyclesSkipped, tail.records, d.accepts, d.claims, d.commits,
        d.releases, d.offsetCommits, d.liveIds, tail.torn, Duration.ofNanos(System.nanoTime() - startNanos),
        snapshot != null ? snapshot.position() : Journal.NO_INDEX, snapshot != null ? snapshot.entries() : 0);
  }

  /**
   * What one read of the queue saw: counts, the latest expiry per cycle of what was read (merged with
   * {@link #baseMax}, what a snapshot saw of the same cycles before its position), the last index read.
   */
  static final class Tail {
    final RecordDecoder d;
    /** Whether the read updates the catalog (a replay at open) or only observes (a snapshot beside the writer). */
    final boolean updateCatalog;
    java.util.Map<Integer, Long> baseMax = java.util.Map.of();
    final java.util.TreeMap<Integer, Long> cycleMax = new java.util.TreeMap<>();
    int cyclesRead;
    long records;
    long torn;
    long lastIndex = Journal.NO_INDEX;

    Tail(RecordDecoder d, boolean updateCatalog) {
      this.d = d;
      this.updateCatalog = updateCatalog;
    }
  }

  /**
   * Reads the records from {@code startCycle} on (only those with an index above {@code afterIndex}, unless it is
   * {@link Journal#NO_INDEX}) up to the end the queue has now. A cycle's latest expiry is exact when the read began
   * at its start or the snapshot ({@code tail.baseMax}) saw its part before {@code afterIndex}; only then does a
   * replay at open record it in the catalog.
   *
   * @return false if the queue could not move to {@code startCycle} (its file is gone)
   */
  boolean read(int startCycle, long afterIndex, JournalVisitor visitor, Tail tail, Progress progress,
      java.util.function.BooleanSupplier abort) {
    final CycleCatalog catalog = q.catalog;
    final RecordDecoder d = tail.d;
    try (ExcerptTailer tailer = q.queue.createTailer()) {
      boolean moved = afterIndex != Journal.NO_INDEX ? tailer.moveToIndex(afterIndex) : tailer.moveToCycle(startCycle);
      if (!moved) {
        LOG.warn("journal {}: cannot move to cycle {} ({}) to replay it; was the "
            + "file removed while the journal was open?", q.dir, String.valueOf(startCycle), q.fileOf(startCycle));
        return false;
      }
      int current = CycleCatalog.NONE;
      long currentMax = NO_EXPIRY;
      boolean exact = false;
      while (true) {
        try (DocumentContext dc = tailer.readingDocument()) {
          if (!dc.isPresent()) {
            break;
          }
          long index = dc.index();
          if (afterIndex != Journal.NO_INDEX && index <= afterIndex) {
            continue;
          }
          int cycle = q.rollCycle.toCycle(index);
          if (cycle != current) {
            if (current != CycleCatalog.NONE) {
              endCycle(tail, current, currentMax, exact);
            }
            current = cycle;
            Long base = tail.baseMax.get(cycle);
            exact = base != null || afterIndex == Journal.NO_INDEX
                || q.rollCycle.toCycle(afterIndex) != cycle;
            currentMax = base != null ? base : NO_EXPIRY;
            tail.cyclesRead++;
          }
          tail.lastIndex = index;
          Bytes<?> recordBytes = dc.wire().bytes();
          visitor.onRecord(index, (int) recordBytes.readRemaining());
          d.load(recordBytes);
          tail.records++;
          int status = d.decode(visitor);
          if (status == RecordDecoder.OK) {
            currentMax = Math.max(currentMax, d.maxExpiry);
            if (tail.updateCatalog) {
              if (d.type == ROLL) {
                catalog.summary(d.rollPreviousCycle, d.rollPreviousMaxExpiry);
              } else if (d.type == SNAPSHOT_END) {
                catalog.snapshotComplete(cycle);
              }
            }
          } else if (status == RecordDecoder.TORN) {
            tail.torn++;
            warnTorn(index, d.tornReason);
          } else {
            throw undecodable(index, d);
          }
        }
        if ((tail.records & PROGRESS_CHECK_MASK) == 0) {
          if (progress != null) {
            progress.maybeReport(tail.records, d);
          }
          if (abort.getAsBoolean()) {
            throw new IllegalStateException("journal " + q.dir + " is closing");
          }
        }
      }
      if (current != CycleCatalog.NONE) {
        endCycle(tail, current, currentMax, exact);
      }
    }
    return true;
  }

  private void endCycle(Tail tail, int cycle, long max, boolean exact) {
    if (exact) {
      tail.cycleMax.put(cycle, max);
      if (tail.updateCatalog) {
        q.catalog.exact(cycle, max);
      }
    }
  }

  private long estimateRecords(int startCycle) {
    try {
      long last = q.queue.lastIndex();
      long first = q.rollCycle.toIndex(startCycle, 0);
      return last < first ? 0 : q.queue.countExcerpts(first, last) + 1;
    } catch (RuntimeException e) {
      return -1;
    }
  }

  private void warnTorn(long index, String reason) {
    LOG.warn("journal {}: skipped a torn or damaged record at index {} in {}: {}; "
        + "the records around it are kept", q.dir, Long.toHexString(index), q.fileOf(q.rollCycle.toCycle(index)),
        reason);
  }

  private JournalException undecodable(long index, RecordDecoder d) {
    String where = "journal " + q.dir + ": record at index " + Long.toHexString(index) + " in "
        + q.fileOf(q.rollCycle.toCycle(index));
    if (d.version < RecordFormat.OLDEST_READABLE_VERSION || d.version > RecordFormat.VERSION) {
      return new UnknownFormatVersionException(where + " has format version " + d.version
          + ", but this reader knows only versions " + RecordFormat.OLDEST_READABLE_VERSION + " to "
          + RecordFormat.VERSION + "; it was written by a newer "
          + "release, so read it with that release (replay stopped there, nothing was skipped)", d.version);
    }
    return new JournalException(where + " has record type " + d.type + ", unknown in format version "
        + d.version, null);
  }

  // -------------------------------------------------------------------------------------------- open: the heads

  /** Reads the head of every cycle on disk: the ROLL summaries of the cycles before, and snapshot completeness. */
  void scanCycles() {
    int first = q.queue.firstCycle();
    int last = q.queue.lastCycle();
    if (first == Integer.MAX_VALUE || last == Integer.MIN_VALUE || first > last) {
      return;
    }
    for (Long c : q.queue.listCyclesBetween(first, last)) {
      q.catalog.present(c.intValue());
    }
    RecordDecoder d = new RecordDecoder();
    try (ExcerptTailer tailer = q.queue.createTailer()) {
      for (int c : q.catalog.list()) {
        scanHead(tailer, d, c);
      }
    }
  }

  private void scanHead(ExcerptTailer tailer, RecordDecoder d, int cycle) {
    if (!tailer.moveToCycle(cycle)) {
      return;
    }
    while (true) {
      try (DocumentContext dc = tailer.readingDocument()) {
        if (!dc.isPresent() || q.rollCycle.toCycle(dc.index()) != cycle) {
          return;
        }
        d.load(dc.wire().bytes());
        int status = d.decode(IGNORE);
        if (status == RecordDecoder.TORN) {
          continue;
        }
        if (status != RecordDecoder.OK) {
          return; // replay reports it
        }
        if (d.type == ROLL) {
          q.catalog.summary(d.rollPreviousCycle, d.rollPreviousMaxExpiry);
        } else if (d.type == SNAPSHOT_END) {
          q.catalog.snapshotComplete(cycle);
          return;
        } else if ((d.type != CLAIM && d.type != OFFSETS) || (d.flags & FLAG_CARRIED) == 0) {
          return;
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------- open: the tail

  /*
   * Repairs the tail of the newest cycle at open, under the directory lock, before the appender exists (no writer is
   * alive, so nothing here races):
   *
   * - Chronicle keeps, in the cycle file's header, the position of the last excerpt, and appends after the excerpt
   *   it finds there. If that excerpt is not on disk (a power loss kept the file header but not the page holding the
   *   excerpt, or the file was cut exactly there), the word at that position is zero: Chronicle would append four
   *   bytes further on, behind a zero word that ends every reader, so later records would be invisible to replay.
   *   The slot becomes an empty metadata excerpt, which readers skip.
   * - A writer killed while appending leaves a header with Chronicle's "not complete" bit after the last excerpt.
   *   Its record was never acknowledged (an append returns only after the header is complete). Chronicle would wait
   *   timeoutMS on it when it next rolls to a new cycle; the header is cleared instead, so the next append neither
   *   waits nor warns. Bytes the dead writer left beyond it are harmless: every append zeroes the word after its
   *   own end, so no reader reaches them.
   */
  void repairTail(int cycle) {
    SingleChronicleQueueStore store = q.queue.storeForCycle(cycle, q.epochMs, false, null);
    if (store == null) {
      return;
    }
    try {
      MappedBytes bytes = store.bytes();
      try {
        long position = store.writePosition();
        if (position <= 0) {
          return;
        }
        int header = bytes.readVolatileInt(position);
        if (header == 0) {
          bytes.writeInt(position + 4, 0);
          if (bytes.compareAndSwapInt(position, 0, Wires.META_DATA | 4)) {
            LOG.warn("journal {}: the last record of {} at byte {} is missing (a "
                + "power loss or a truncated file); marked its slot empty so later records stay readable", q.dir,
                q.fileOf(cycle), String.valueOf(position));
          }
          return;
        }
        for (int steps = 0; steps < 4096 && header != 0 && header != Wires.END_OF_DATA; steps++) {
          if ((header & Wires.NOT_COMPLETE) != 0) {
            if (bytes.compareAndSwapInt(position, header, 0)) {
              LOG.info("journal {}: discarded an unfinished record at byte {} of {} "
                  + "(its writer died while appending it; it was never acknowledged)", q.dir,
                  String.valueOf(position), q.fileOf(cycle));
            }
            return;
          }
          position = (position + 4 + Wires.lengthOf(header) + 3) & ~3L;
          header = bytes.readVolatileInt(position);
        }
      } finally {
        bytes.releaseLast();
      }
    } finally {
      q.queue.closeStore(store);
    }
  }

  /** Reports replay progress to the options' listener about once per progress interval, and once at the end. */
  final class Progress {
    final long startNanos;
    final long intervalNanos = q.options.getProgressInterval().toNanos();
    final ReplayProgressListener listener = q.options.getProgressListener();
    long total = -1;
    long lastReportNanos;

    Progress(long startNanos) {
      this.startNanos = startNanos;
      this.lastReportNanos = startNanos;
    }

    void maybeReport(long records, RecordDecoder d) {
      long now = System.nanoTime();
      if (now - lastReportNanos >= intervalNanos) {
        lastReportNanos = now;
        report(records, d, false);
      }
    }

    void report(long records, RecordDecoder d, boolean done) {
      long elapsed = System.nanoTime() - startNanos;
      double percent = done ? 100.0 : total > 0 ? Math.min(100.0, records * 100.0 / total) : 0.0;
      long entries = d.entries();
      double rate = elapsed == 0 ? 0 : entries * 1e9 / elapsed;
      listener.onProgress(q.dir, new ReplayProgress(entries, records, d.liveIds, percent, rate,
          Duration.ofNanos(elapsed)), done);
    }
  }
}
