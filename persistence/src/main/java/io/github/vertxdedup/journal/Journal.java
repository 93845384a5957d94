package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.RecordFormat.ACCEPT;
import static io.github.vertxdedup.journal.RecordFormat.CLAIM;
import static io.github.vertxdedup.journal.RecordFormat.COMMIT;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_CARRIED;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_KEYS;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_PAYLOADS;
import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;
import static io.github.vertxdedup.journal.RecordFormat.OFFSETS;
import static io.github.vertxdedup.journal.RecordFormat.RELEASE;
import static io.github.vertxdedup.journal.RecordFormat.ROLL;
import static io.github.vertxdedup.journal.RecordFormat.SNAPSHOT_END;
import static io.github.vertxdedup.journal.RecordFormat.UNKNOWN_EXPIRY;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.MappedBytes;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.core.io.Closeable;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.RollingResourcesCache;
import net.openhft.chronicle.queue.impl.StoreFileListener;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueStore;
import net.openhft.chronicle.wire.DocumentContext;
import net.openhft.chronicle.wire.Wires;

/**
 * The journal of one partition: a Chronicle Queue in one directory, holding accepted ids, claims, commits, releases
 * and committed consumer offsets as versioned, checksummed binary records, so that a restart rebuilds the window.
 *
 * <h2>Life cycle and threads</h2>
 * <ol>
 *   <li>{@link #open} (blocking; off the event loop) takes the directory's exclusive lock, clears the locks a
 *       killed writer left in Chronicle's files and opens the queue.</li>
 *   <li>{@link #replay} (blocking; off the event loop) delivers every record from the oldest cycle that may still
 *       hold a live entry. It must complete before the first append: each new cycle starts with the owner's
 *       current claims and offsets (see {@link RollSnapshotSource}), so the owner must have recovered them.</li>
 *   <li>{@code append*} methods are called by one owner thread (the partition's event loop), one at a time. Each
 *       returns once the record is in the memory-mapped queue file, which survives a crash of the process; none
 *       waits for the disk. They return the record's index (increasing) or throw {@link JournalWriteException},
 *       in which case the record is not in the journal.</li>
 *   <li>{@link #sync} (blocking; any thread, typically a worker) forces everything appended before it to disk:
 *       under {@link SyncPolicy#SYNC} the owner answers only once a sync covering the record's index returned.</li>
 *   <li>{@link #deleteExpiredCycles} (blocking; any thread) deletes cycle files that hold no live entry.</li>
 *   <li>{@link #close} (blocking; any thread, after the last append) syncs unless the policy is
 *       {@link SyncPolicy#NONE}, closes the queue and releases the lock.</li>
 * </ol>
 *
 * <h2>Records</h2>
 * One record is one queue excerpt: format version, type, entries, CRC32C (see {@code docs/journal.md}). A record
 * that a crash or an I/O error cut short is detected by its length and checksum; replay skips it with a warning and
 * keeps everything else. A record of an unknown format version stops the replay with
 * {@link UnknownFormatVersionException}.
 *
 * <h2>Retention</h2>
 * Files roll every {@link JournalOptions#getRollCycle()}. When an append is the first of a new cycle, the journal
 * first writes a {@code ROLL} record (carrying the previous cycle's latest expiry), the owner's open claims and
 * committed offsets, and an end-of-snapshot record; so a file is no longer needed once every accept and commit in
 * it has expired, and {@link #deleteExpiredCycles} removes it.
 */
public final class Journal implements AutoCloseable {

  /** Largest claimer id, in UTF-8 bytes. */
  public static final int MAX_CLAIMER_BYTES = 255;

  /** Returned by {@link #sync()} and {@link #lastAppendedIndex()} before anything was appended. */
  public static final long NO_INDEX = Syncer.NOTHING;

  private static final System.Logger LOG = System.getLogger("io.github.vertxdedup.journal");
  /** Entries per carried-over record in a roll snapshot. */
  private static final int SNAPSHOT_CHUNK = 1024;
  /** Replay checks the time for a progress report every this many records. */
  private static final int PROGRESS_CHECK_MASK = 255;
  private static final JournalVisitor IGNORE = new JournalVisitor() {
  };

  private enum State { OPENED, READY, CLOSED }

  private final Path dir;
  private final JournalOptions options;
  private final DirectoryLock directoryLock;
  private final SingleChronicleQueue queue;
  private final RollCycle rollCycle;
  private final long epochMs;
  private final long cycleMs;
  private final JournalTime time;
  private final RollingResourcesCache cycleFiles;
  private final CycleCatalog catalog = new CycleCatalog();
  private final Syncer syncer;
  private final ScheduledFuture<?> backgroundSync;
  private final AtomicInteger openCycleFiles = new AtomicInteger();
  private final AtomicLong appendFailures = new AtomicLong();
  private final AtomicLong syncFailures = new AtomicLong();
  private final Object retentionLock = new Object();

  private volatile State state = State.OPENED;
  private volatile Throwable syncFailure;

  // Owner's thread only.
  private final RecordEncoder encoder = new RecordEncoder();
  private final SnapshotWriter snapshotWriter = new SnapshotWriter();
  private ExcerptAppender appender;
  private boolean appending;
  private boolean appendedAny;
  private int rolledCycle = CycleCatalog.NONE;
  private int writtenCycle = CycleCatalog.NONE;
  private long writtenCycleMaxExpiry = NO_EXPIRY;
  private File writtenFile;
  private Runnable writeFault;

  private Journal(Path dir, JournalOptions options, DirectoryLock directoryLock) {
    this.dir = dir;
    this.options = options;
    this.directoryLock = directoryLock;
    this.rollCycle = RollCycleChoice.of(options.getRollCycle());
    this.time = new JournalTime(options.getClock());
    ChronicleLocks.clearLeftovers(dir);
    removeUnfinishedCycleFiles(dir);
    this.queue = SingleChronicleQueueBuilder.binary(dir)
        .rollCycle(rollCycle)
        .timeProvider(time)
        .timeoutMS(options.getChronicleTimeout().toMillis())
        .syncMode(SyncMode.NONE)
        .storeFileListener(new OpenFileCounter(openCycleFiles))
        .build();
    try {
      this.epochMs = queue.epoch();
      this.cycleMs = rollCycle.lengthInMillis();
      File dirFile = dir.toFile();
      this.cycleFiles = new RollingResourcesCache(rollCycle, epochMs,
          name -> new File(dirFile, name + SingleChronicleQueue.SUFFIX),
          file -> file.getName().substring(0, file.getName().length() - SingleChronicleQueue.SUFFIX.length()));
      scanCycles();
      int newest = catalog.newest();
      if (newest != CycleCatalog.NONE) {
        time.floor(epochMs + newest * cycleMs);
        if (catalog.isSnapshotComplete(newest)) {
          rolledCycle = newest;
        }
        repairTail(newest);
      }
      // Creating the appender writes the end-of-cycle markers a killed writer did not write; with the tail
      // repaired it has nothing to wait for (and would wait at most chronicleTimeout).
      this.appender = queue.createAppender();
      this.syncer = new Syncer(dir);
      this.backgroundSync = options.getSyncPolicy() == SyncPolicy.ASYNC
          ? BackgroundSync.schedule(this::backgroundSync, options.getSyncInterval())
          : null;
    } catch (RuntimeException | Error e) {
      Closeable.closeQuietly(appender);
      queue.close();
      throw e;
    }
  }

  /**
   * Opens the journal in {@code dir}, creating the directory if needed, and takes its exclusive lock. Blocking:
   * call it off the event loop. O(number of cycle files): it reads the first records of each.
   *
   * @param dir the journal directory, one per partition ({@code <journalDir>/<address>/<partition>})
   * @param options the options; copied
   * @return the open journal; call {@link #replay} before the first append
   * @throws JournalLockedException if another journal (in this or another process) holds the directory
   * @throws UncheckedIOException if the directory or its lock file cannot be created
   * @throws NullPointerException if an argument is null
   */
  public static Journal open(Path dir, JournalOptions options) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(options, "options");
    JournalOptions copy = new JournalOptions(options);
    Path abs = dir.toAbsolutePath().normalize();
    try {
      Files.createDirectories(abs);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the journal directory " + abs, e);
    }
    DirectoryLock lock = DirectoryLock.acquire(abs);
    try {
      return new Journal(abs, copy, lock);
    } catch (RuntimeException | Error e) {
      lock.close();
      throw e;
    }
  }

  /*
   * A writer killed while it created a cycle file leaves a file whose first header (Chronicle's store header) never
   * got its "complete" mark. No record can be in it: Chronicle completes that header before the first excerpt. Yet
   * every open of that cycle would wait timeoutMS for the dead writer to finish it. Such a file is deleted before
   * the queue opens; the directory lock proves its writer is gone.
   */
  private static void removeUnfinishedCycleFiles(Path dir) {
    List<Path> files = new ArrayList<>();
    try (java.util.stream.Stream<Path> s = Files.list(dir)) {
      s.filter(p -> p.getFileName().toString().endsWith(SingleChronicleQueue.SUFFIX)).forEach(files::add);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the journal directory " + dir, e);
    }
    for (Path file : files) {
      try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
          java.nio.file.StandardOpenOption.READ)) {
        java.nio.ByteBuffer first = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
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
        LOG.log(System.Logger.Level.WARNING, "journal {0}: deleted {1}, a cycle file whose creation never finished "
            + "(its writer died creating it; it holds no record)", dir, file.getFileName());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot delete the unfinished journal cycle file " + file, e);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------- replay

  /**
   * Delivers the journal's records to {@code visitor} in append order, from the oldest cycle that may still hold a
   * live entry (see {@link #deleteExpiredCycles}); older cycles are skipped unread. Torn or damaged records are
   * skipped with a warning. Reports progress to the options' listener about once per progress interval. Blocking:
   * call it off the event loop. May be called again before the first append (it reads the same records).
   *
   * @param visitor receives the records; see {@link JournalVisitor}
   * @return counts and timing
   * @throws UnknownFormatVersionException if a record has a format version this reader does not know; the replay
   *     stops there
   * @throws JournalException if a record with a valid checksum has a type this version does not define
   * @throws IllegalStateException if the journal is closed or something was appended already
   * @throws RuntimeException whatever the visitor throws, unchanged
   */
  public ReplayResult replay(JournalVisitor visitor) {
    Objects.requireNonNull(visitor, "visitor");
    synchronized (this) {
      if (state == State.CLOSED) {
        throw new IllegalStateException("journal " + dir + " is closed");
      }
      if (appendedAny) {
        throw new IllegalStateException("journal " + dir + ": replay must run before the first append");
      }
    }
    final long startNanos = System.nanoTime();
    final long nowMs = time.now();
    final int start = catalog.replayStart(nowMs);
    final RecordDecoder d = new RecordDecoder();
    d.nowMs = nowMs;
    final Progress progress = new Progress(startNanos);
    int cyclesRead = 0;
    int cyclesSkipped = 0;
    long records = 0;
    long torn = 0;
    if (start != CycleCatalog.NONE) {
      for (int c : catalog.list()) {
        if (c < start) {
          cyclesSkipped++;
        }
      }
      progress.total = estimateRecords(start);
      try (ExcerptTailer tailer = queue.createTailer()) {
        if (!tailer.moveToCycle(start)) {
          LOG.log(System.Logger.Level.WARNING, "journal {0}: cannot move to cycle {1} ({2}) to replay it; was the "
              + "file removed while the journal was open?", dir, String.valueOf(start), fileOf(start));
        } else {
          int current = CycleCatalog.NONE;
          long currentMax = NO_EXPIRY;
          while (true) {
            try (DocumentContext dc = tailer.readingDocument()) {
              if (!dc.isPresent()) {
                break;
              }
              long index = dc.index();
              int cycle = rollCycle.toCycle(index);
              if (cycle != current) {
                if (current != CycleCatalog.NONE) {
                  catalog.exact(current, currentMax);
                }
                current = cycle;
                currentMax = NO_EXPIRY;
                cyclesRead++;
              }
              Bytes<?> recordBytes = dc.wire().bytes();
              visitor.onRecord(index, (int) recordBytes.readRemaining());
              d.load(recordBytes);
              records++;
              int status = d.decode(visitor);
              if (status == RecordDecoder.OK) {
                currentMax = Math.max(currentMax, d.maxExpiry);
                if (d.type == ROLL) {
                  catalog.summary(d.rollPreviousCycle, d.rollPreviousMaxExpiry);
                } else if (d.type == SNAPSHOT_END) {
                  catalog.snapshotComplete(cycle);
                }
              } else if (status == RecordDecoder.TORN) {
                torn++;
                warnTorn(index, d.tornReason);
              } else {
                throw undecodable(index, d);
              }
            }
            if ((records & PROGRESS_CHECK_MASK) == 0) {
              progress.maybeReport(records, d);
            }
          }
          if (current != CycleCatalog.NONE) {
            catalog.exact(current, currentMax);
          }
        }
      }
    }
    synchronized (this) {
      if (state == State.OPENED) {
        state = State.READY;
      }
    }
    progress.report(records, d, true);
    return new ReplayResult(start, cyclesRead, cyclesSkipped, records, d.accepts, d.claims, d.commits,
        d.releases, d.offsetCommits, d.liveIds, torn, Duration.ofNanos(System.nanoTime() - startNanos));
  }

  private long estimateRecords(int startCycle) {
    try {
      long last = queue.lastIndex();
      long first = rollCycle.toIndex(startCycle, 0);
      return last < first ? 0 : queue.countExcerpts(first, last) + 1;
    } catch (RuntimeException e) {
      return -1;
    }
  }

  private void warnTorn(long index, String reason) {
    LOG.log(System.Logger.Level.WARNING, "journal {0}: skipped a torn or damaged record at index {1} in {2}: {3}; "
        + "the records around it are kept", dir, Long.toHexString(index), fileOf(rollCycle.toCycle(index)), reason);
  }

  private JournalException undecodable(long index, RecordDecoder d) {
    String where = "journal " + dir + ": record at index " + Long.toHexString(index) + " in "
        + fileOf(rollCycle.toCycle(index));
    if (d.version < RecordFormat.OLDEST_READABLE_VERSION || d.version > RecordFormat.VERSION) {
      return new UnknownFormatVersionException(where + " has format version " + d.version
          + ", but this reader knows only versions " + RecordFormat.OLDEST_READABLE_VERSION + " to "
          + RecordFormat.VERSION + "; it was written by a newer "
          + "release, so read it with that release (replay stopped there, nothing was skipped)", d.version);
    }
    return new JournalException(where + " has record type " + d.type + ", unknown in format version "
        + d.version, null);
  }

  /** Reads the head of every cycle on disk: the ROLL summaries of the cycles before, and snapshot completeness. */
  private void scanCycles() {
    int first = queue.firstCycle();
    int last = queue.lastCycle();
    if (first == Integer.MAX_VALUE || last == Integer.MIN_VALUE || first > last) {
      return;
    }
    for (Long c : queue.listCyclesBetween(first, last)) {
      catalog.present(c.intValue());
    }
    RecordDecoder d = new RecordDecoder();
    try (ExcerptTailer tailer = queue.createTailer()) {
      for (int c : catalog.list()) {
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
        if (!dc.isPresent() || rollCycle.toCycle(dc.index()) != cycle) {
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
          catalog.summary(d.rollPreviousCycle, d.rollPreviousMaxExpiry);
        } else if (d.type == SNAPSHOT_END) {
          catalog.snapshotComplete(cycle);
          return;
        } else if ((d.type != CLAIM && d.type != OFFSETS) || (d.flags & FLAG_CARRIED) == 0) {
          return;
        }
      }
    }
  }

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
  private void repairTail(int cycle) {
    SingleChronicleQueueStore store = queue.storeForCycle(cycle, epochMs, false, null);
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
            LOG.log(System.Logger.Level.WARNING, "journal {0}: the last record of {1} at byte {2} is missing (a "
                + "power loss or a truncated file); marked its slot empty so later records stay readable", dir,
                fileOf(cycle), String.valueOf(position));
          }
          return;
        }
        for (int steps = 0; steps < 4096 && header != 0 && header != Wires.END_OF_DATA; steps++) {
          if ((header & Wires.NOT_COMPLETE) != 0) {
            if (bytes.compareAndSwapInt(position, header, 0)) {
              LOG.log(System.Logger.Level.INFO, "journal {0}: discarded an unfinished record at byte {1} of {2} "
                  + "(its writer died while appending it; it was never acknowledged)", dir, String.valueOf(position),
                  fileOf(cycle));
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
      queue.closeStore(store);
    }
  }

  // --------------------------------------------------------------------------------------------------- appends

  /**
   * Appends one accepted id. Owner's thread; O(1); allocates nothing.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param keyFingerprint the business key's fingerprint, or 0
   * @param payloadHash the payload's hash, or 0
   * @param acceptedAtMs when it was accepted, epoch milliseconds
   * @param expiresAtMs when it may be forgotten (remember-until), {@code > acceptedAtMs}
   * @return the record's index
   * @throws IllegalArgumentException if {@code fingerprint} is 0 or {@code expiresAtMs <= acceptedAtMs}
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or when called from a roll
   *     snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendAccept(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs,
      long expiresAtMs) {
    checkAccept(fingerprint, acceptedAtMs, expiresAtMs);
    beginAppend();
    try {
      int flags = (keyFingerprint != 0 ? FLAG_KEYS : 0) | (payloadHash != 0 ? FLAG_PAYLOADS : 0);
      RecordEncoder e = encoder;
      e.begin(ACCEPT, flags, 1);
      e.putLong(fingerprint);
      if (keyFingerprint != 0) {
        e.putLong(keyFingerprint);
      }
      if (payloadHash != 0) {
        e.putLong(payloadHash);
      }
      e.putLong(acceptedAtMs);
      e.putLong(expiresAtMs);
      return write(expiresAtMs);
    } finally {
      appending = false;
    }
  }

  /**
   * Appends a batch of accepted ids as one record, all or nothing: the group-commit form. Owner's thread;
   * O(batch size). The batch is left as it was (clear it to reuse it).
   *
   * @param batch the ids; not empty
   * @return the record's index
   * @throws IllegalArgumentException if the batch is empty
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; none of the batch is in the journal
   */
  public long appendAccepts(AcceptBatch batch) {
    Objects.requireNonNull(batch, "batch");
    if (batch.size == 0) {
      throw new IllegalArgumentException("batch must not be empty");
    }
    beginAppend();
    try {
      int flags = (batch.anyKey ? FLAG_KEYS : 0) | (batch.anyPayload ? FLAG_PAYLOADS : 0);
      encoder.begin(ACCEPT, flags, batch.size);
      encoder.putAccepts(batch, flags);
      long max = NO_EXPIRY;
      long[] expires = batch.expiresAtMs;
      for (int i = 0, n = batch.size; i < n; i++) {
        max = Math.max(max, expires[i]);
      }
      return write(max);
    } finally {
      appending = false;
    }
  }

  /**
   * Appends a claim: the id is in flight, held by {@link ClaimEntry#claimerId()}, until
   * {@link ClaimEntry#leaseEndMs()}. Written in the current format (version {@value RecordFormat#VERSION}).
   * Owner's thread.
   *
   * @param claim the claim
   * @return the record's index
   * @throws NullPointerException if {@code claim} is null
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendClaim(ClaimEntry claim) {
    Objects.requireNonNull(claim, "claim");
    byte[] claimer = claim.claimerUtf8();
    beginAppend();
    try {
      encoder.begin(CLAIM, 0, 1);
      putClaim(encoder, claim, claimer);
      return write(NO_EXPIRY); // a claim does not keep its cycle: the roll snapshot carries it while it is open
    } finally {
      appending = false;
    }
  }

  /**
   * Appends a commit: the claim with {@code token} succeeded; remember the id until {@code expiresAtMs}.
   * Owner's thread.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param token the token of the committed claim
   * @param expiresAtMs when the id may be forgotten, epoch milliseconds
   * @return the record's index
   * @throws IllegalArgumentException if {@code fingerprint} is 0
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendCommit(long fingerprint, long token, long expiresAtMs) {
    checkFingerprint(fingerprint);
    beginAppend();
    try {
      encoder.begin(COMMIT, 0, 1);
      encoder.putLong(fingerprint);
      encoder.putLong(token);
      encoder.putLong(expiresAtMs);
      return write(expiresAtMs);
    } finally {
      appending = false;
    }
  }

  /**
   * Appends a release: the claim with {@code token} gave up; the id is free again. Owner's thread.
   *
   * @param fingerprint the id's fingerprint, not 0
   * @param token the token of the released claim
   * @return the record's index
   * @throws IllegalArgumentException if {@code fingerprint} is 0
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendRelease(long fingerprint, long token) {
    checkFingerprint(fingerprint);
    beginAppend();
    try {
      encoder.begin(RELEASE, 0, 1);
      encoder.putLong(fingerprint);
      encoder.putLong(token);
      return write(NO_EXPIRY);
    } finally {
      appending = false;
    }
  }

  /**
   * Appends one committed consumer offset. Owner's thread.
   *
   * @param topic the topic; see {@link OffsetCommit}
   * @param partition the partition, {@code >= 0}
   * @param offset the committed offset, {@code >= 0}
   * @return the record's index
   * @throws IllegalArgumentException if a component is invalid
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; it is not in the journal
   */
  public long appendOffsetCommit(String topic, int partition, long offset) {
    return appendOffsetCommits(List.of(new OffsetCommit(topic, partition, offset)));
  }

  /**
   * Appends committed consumer offsets as one record, all or nothing. Owner's thread.
   *
   * @param commits the offsets; not empty, at most {@link AcceptBatch#MAX_SIZE}
   * @return the record's index
   * @throws IllegalArgumentException if {@code commits} is empty or too large
   * @throws IllegalStateException before {@link #replay}, after {@link #close}, or from a roll snapshot source
   * @throws JournalWriteException if the record could not be written; none of it is in the journal
   */
  public long appendOffsetCommits(Collection<OffsetCommit> commits) {
    Objects.requireNonNull(commits, "commits");
    if (commits.isEmpty() || commits.size() > AcceptBatch.MAX_SIZE) {
      throw new IllegalArgumentException(
          "commits must hold 1 to " + AcceptBatch.MAX_SIZE + " offsets but held " + commits.size());
    }
    beginAppend();
    try {
      encoder.begin(OFFSETS, 0, commits.size());
      for (OffsetCommit c : commits) {
        putOffset(encoder, c.topic().getBytes(StandardCharsets.UTF_8), c.partition(), c.offset());
      }
      return write(NO_EXPIRY);
    } finally {
      appending = false;
    }
  }

  private void beginAppend() {
    if (appending) {
      throw new IllegalStateException("journal " + dir + ": append called while another append runs (from a roll "
          + "snapshot source, or from a second thread); the appender is single-threaded");
    }
    State s = state;
    if (s != State.READY) {
      throw new IllegalStateException(s == State.CLOSED
          ? "journal " + dir + " is closed"
          : "journal " + dir + ": replay() must complete before the first append (recover first: each new cycle "
              + "carries the owner's recovered claims and offsets)");
    }
    Throwable failed = syncFailure;
    if (failed != null) {
      throw new JournalWriteException("journal " + dir + ": an earlier sync failed, so what reached the disk is "
          + "unknown; close and reopen the journal", failed);
    }
    appending = true;
    try {
      long t = time.advance();
      int cycle = (int) Math.floorDiv(t - epochMs, cycleMs);
      if (cycle != rolledCycle) {
        roll(cycle, t);
      }
    } catch (RuntimeException | Error e) {
      appending = false;
      throw e;
    }
  }

  /** Starts {@code cycle}: ROLL, the owner's snapshot, SNAPSHOT_END. Retried by the next append if it fails. */
  private void roll(int cycle, long nowMs) {
    int newest = catalog.newest();
    int previous = newest == cycle ? catalog.newestBefore(cycle) : newest;
    long previousMax = NO_EXPIRY;
    if (previous != CycleCatalog.NONE) {
      long known = catalog.maxExpiry(previous);
      previousMax = previous == writtenCycle && known != UNKNOWN_EXPIRY
          ? Math.max(known, writtenCycleMaxExpiry)
          : known;
      // Final from here: nothing is written to a cycle once a later one has begun.
      catalog.exact(previous, previousMax);
    }
    encoder.begin(ROLL, 0, 1);
    encoder.putInt(cycle);
    encoder.putInt(previous);
    encoder.putLong(previousMax);
    encoder.putLong(nowMs);
    write(NO_EXPIRY);
    SnapshotWriter w = snapshotWriter;
    w.clear();
    try {
      options.getRollSnapshotSource().writeSnapshot(w);
    } catch (RuntimeException e) {
      throw new JournalWriteException("journal " + dir + ": the roll snapshot source failed; the append was not "
          + "written and the next append writes the snapshot again", e);
    }
    w.flush();
    encoder.begin(SNAPSHOT_END, 0, 1);
    encoder.putInt(w.claimCount);
    encoder.putInt(w.offsetCount);
    write(NO_EXPIRY);
    catalog.started(cycle);
    rolledCycle = cycle;
  }

  /** Checksums the encoded record and writes it as one excerpt; rolls it back if anything fails. */
  private long write(long maxExpiry) {
    final int len = encoder.finish();
    final byte[] buf = encoder.buffer();
    final long index;
    final ExcerptAppender a;
    try {
      a = appender();
      DocumentContext dc = a.writingDocument();
      boolean complete = false;
      try {
        Bytes<?> bytes = dc.wire().bytes();
        Runnable fault = writeFault;
        if (fault == null) {
          bytes.write(buf, 0, len);
        } else {
          int half = len / 2;
          bytes.write(buf, 0, half);
          fault.run();
          bytes.write(buf, half, len - half);
        }
        complete = true;
      } finally {
        if (!complete) {
          dc.rollbackOnClose();
        }
        dc.close();
      }
      index = a.lastIndexAppended();
    } catch (RuntimeException | InternalError e) {
      // InternalError: a fault on the mapped file (SIGBUS), e.g. the disk filled up under a sparse file.
      appendFailures.incrementAndGet();
      discardAppender();
      throw new JournalWriteException("journal " + dir + ": append failed and was rolled back", e);
    }
    int cycle = rollCycle.toCycle(index);
    if (cycle != writtenCycle) {
      writtenCycle = cycle;
      writtenCycleMaxExpiry = NO_EXPIRY;
      writtenFile = a.currentFile();
    }
    if (maxExpiry > writtenCycleMaxExpiry) {
      writtenCycleMaxExpiry = maxExpiry;
    }
    appendedAny = true;
    syncer.appended(index, writtenFile);
    return index;
  }

  private ExcerptAppender appender() {
    ExcerptAppender a = appender;
    if (a == null) {
      a = queue.createAppender();
      appender = a;
    }
    return a;
  }

  private void discardAppender() {
    ExcerptAppender a = appender;
    appender = null;
    try {
      Closeable.closeQuietly(a);
    } catch (RuntimeException ignored) {
      // a broken appender; the next append opens a new one
    }
  }

  private static void putClaim(RecordEncoder e, ClaimEntry c, byte[] claimer) {
    e.putLong(c.fingerprint());
    e.putLong(c.keyFingerprint());
    e.putLong(c.payloadHash());
    e.putLong(c.token());
    e.putLong(c.claimedAtMs());
    e.putLong(c.leaseEndMs());
    e.putLong(c.rememberUntilMs());
    e.putShortString(claimer);
  }

  private static void putOffset(RecordEncoder e, byte[] topic, int partition, long offset) {
    e.putInt(partition);
    e.putLong(offset);
    e.putShortString(topic);
  }

  static void checkFingerprint(long fingerprint) {
    if (fingerprint == 0) {
      throw new IllegalArgumentException("fingerprint must not be 0");
    }
  }

  static void checkAccept(long fingerprint, long acceptedAtMs, long expiresAtMs) {
    checkFingerprint(fingerprint);
    if (expiresAtMs <= acceptedAtMs) {
      throw new IllegalArgumentException(
          "expiresAtMs must be > acceptedAtMs " + acceptedAtMs + " but was " + expiresAtMs);
    }
  }

  static byte[] claimerBytes(String claimerId) {
    Objects.requireNonNull(claimerId, "claimerId");
    byte[] utf8 = claimerId.getBytes(StandardCharsets.UTF_8);
    if (utf8.length > MAX_CLAIMER_BYTES) {
      throw new IllegalArgumentException(
          "claimerId must be <= " + MAX_CLAIMER_BYTES + " bytes in UTF-8 but was " + utf8.length);
    }
    return utf8;
  }


  /** Collects a roll snapshot and writes it as carried-over CLAIM and OFFSETS records of at most SNAPSHOT_CHUNK. */
  private final class SnapshotWriter implements RollSnapshotWriter {
    private final List<ClaimEntry> claims = new ArrayList<>();
    private final List<OffsetCommit> offsets = new ArrayList<>();
    int claimCount;
    int offsetCount;

    void clear() {
      claims.clear();
      offsets.clear();
      claimCount = 0;
      offsetCount = 0;
    }

    @Override
    public void claim(ClaimEntry claim) {
      claims.add(Objects.requireNonNull(claim, "claim"));
    }

    @Override
    public void offsetCommit(String topic, int partition, long offset) {
      offsets.add(new OffsetCommit(topic, partition, offset));
    }

    void flush() {
      for (int from = 0; from < claims.size(); from += SNAPSHOT_CHUNK) {
        int to = Math.min(claims.size(), from + SNAPSHOT_CHUNK);
        encoder.begin(CLAIM, FLAG_CARRIED, to - from);
        for (int i = from; i < to; i++) {
          ClaimEntry c = claims.get(i);
          putClaim(encoder, c, c.claimerUtf8());
        }
        write(NO_EXPIRY);
      }
      for (int from = 0; from < offsets.size(); from += SNAPSHOT_CHUNK) {
        int to = Math.min(offsets.size(), from + SNAPSHOT_CHUNK);
        encoder.begin(OFFSETS, FLAG_CARRIED, to - from);
        for (int i = from; i < to; i++) {
          OffsetCommit o = offsets.get(i);
          putOffset(encoder, o.topic().getBytes(StandardCharsets.UTF_8), o.partition(), o.offset());
        }
        write(NO_EXPIRY);
      }
      claimCount = claims.size();
      offsetCount = offsets.size();
    }
  }

  // ------------------------------------------------------------------------------------------------------- sync

  /**
   * Forces to disk every record appended before this call, and returns the index up to which every record is
   * durable. Thread-safe; blocking (one {@code fsync}, about 0.1 ms to a few ms): call it off the event loop.
   * Concurrent calls are serialised, and a call whose records an earlier one already covered returns at once, so
   * one sync serves every append made before it (group commit). A record with index {@code i} is durable once a
   * call returned a value {@code >= i}.
   *
   * <p>A failed sync leaves the journal failed: what reached the disk is unknown (Linux may drop the dirty pages
   * after reporting the error), so every later append and sync throws until the journal is closed and reopened.
   *
   * @return the index of the last durable record, or {@link #NO_INDEX} if nothing was appended
   * @throws JournalWriteException if the sync fails now or failed before
   * @throws IllegalStateException if the journal is closed
   */
  public long sync() {
    if (state == State.CLOSED) {
      throw new IllegalStateException("journal " + dir + " is closed");
    }
    Throwable failed = syncFailure;
    if (failed != null) {
      throw new JournalWriteException("journal " + dir + ": an earlier sync failed; close and reopen it", failed);
    }
    try {
      return syncer.sync();
    } catch (IOException | RuntimeException e) {
      syncFailure = e;
      syncFailures.incrementAndGet();
      throw new JournalWriteException("journal " + dir + ": sync failed; the journal must be reopened", e);
    }
  }

  private void backgroundSync() {
    if (state == State.CLOSED || syncFailure != null) {
      return;
    }
    try {
      sync();
    } catch (JournalWriteException e) {
      LOG.log(System.Logger.Level.ERROR, "journal " + dir + ": background sync failed; appends fail until the "
          + "journal is reopened", e);
    } catch (IllegalStateException closed) {
      // closed meanwhile
    }
  }

  // -------------------------------------------------------------------------------------------------- retention

  /**
   * Deletes the cycle files a replay at {@code nowMs} would not read: those before the oldest cycle that may still
   * hold a live entry (every accept and commit in them has expired, and their claims and offsets were carried into
   * a later cycle). Never deletes the newest cycle. Thread-safe with appends; blocking (file deletion): run it off
   * the event loop, for example once per roll cycle from a timer (a journal nobody appends to still has files to
   * delete). O(number of cycle files).
   *
   * @param nowMs the owner's current time, epoch milliseconds
   * @return what was deleted and what is kept
   * @throws IllegalStateException before {@link #replay} completed, or after {@link #close}
   */
  public RetentionResult deleteExpiredCycles(long nowMs) {
    synchronized (retentionLock) {
      State s = state;
      if (s != State.READY) {
        throw new IllegalStateException("journal " + dir + (s == State.CLOSED ? " is closed"
            : ": replay() must complete before expired cycles are deleted"));
      }
      int start = catalog.replayStart(nowMs);
      int deleted = 0;
      for (int c : catalog.list()) {
        if (start == CycleCatalog.NONE || c >= start) {
          break;
        }
        File f = fileOf(c);
        try {
          Files.deleteIfExists(f.toPath());
        } catch (IOException e) {
          LOG.log(System.Logger.Level.WARNING, "journal " + dir + ": cannot delete expired cycle file " + f, e);
          break;
        }
        catalog.removed(c);
        deleted++;
      }
      if (deleted > 0) {
        queue.refreshDirectoryListing();
      }
      return new RetentionResult(deleted, catalog.oldest(), catalog.size());
    }
  }

  private File fileOf(int cycle) {
    return cycleFiles.resourceFor(cycle).path;
  }

  // ------------------------------------------------------------------------------------------------ accessors

  /**
   * Returns the journal directory.
   *
   * @return the absolute path
   */
  public Path directory() {
    return dir;
  }

  /**
   * Returns a copy of the options the journal was opened with.
   *
   * @return the options
   */
  public JournalOptions options() {
    return new JournalOptions(options);
  }

  /**
   * Returns the index of the last record appended since the journal was opened. Thread-safe.
   *
   * @return the index, or {@link #NO_INDEX}
   */
  public long lastAppendedIndex() {
    return syncer.appendedIndex();
  }

  /**
   * Returns the index up to which records are known to be on disk. Thread-safe.
   *
   * @return the index, or {@link #NO_INDEX}
   */
  public long syncedIndex() {
    return syncer.syncedIndex();
  }

  /**
   * Returns the number of cycle files on disk, as the journal knows them. Thread-safe.
   *
   * @return the count
   */
  public int cycleCount() {
    return catalog.size();
  }

  /**
   * Returns the roll cycles on disk, oldest first (Chronicle's cycle numbers: time since the epoch divided by the
   * roll cycle length). Thread-safe.
   *
   * @return a new list
   */
  public List<Integer> cycles() {
    return catalog.list();
  }

  /**
   * Returns the number of cycle files Chronicle holds open (mapped) right now. Thread-safe.
   *
   * @return the count
   */
  public int openCycleFiles() {
    return openCycleFiles.get();
  }

  /**
   * Returns how many appends failed since the journal was opened. Thread-safe.
   *
   * @return the count
   */
  public long appendFailures() {
    return appendFailures.get();
  }

  /**
   * Returns how many syncs failed since the journal was opened (at most one: a failure is final). Thread-safe.
   *
   * @return the count
   */
  public long syncFailures() {
    return syncFailures.get();
  }

  /** Tests only: runs {@code fault} in the middle of writing each record; null removes it. */
  void writeFault(Runnable fault) {
    this.writeFault = fault;
  }

  /**
   * Closes the journal: stops the background sync, syncs unless the policy is {@link SyncPolicy#NONE} (and no
   * sync failed), closes the queue and releases the directory lock. Blocking; call it from any thread once the
   * owner has stopped appending. Idempotent.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
    }
    try {
      if (backgroundSync != null) {
        backgroundSync.cancel(false);
      }
      if (options.getSyncPolicy() != SyncPolicy.NONE && syncFailure == null) {
        try {
          syncer.sync();
        } catch (IOException | RuntimeException e) {
          LOG.log(System.Logger.Level.WARNING, "journal " + dir + ": final sync failed", e);
        }
      }
    } finally {
      Closeable.closeQuietly(appender);
      queue.close();
      syncer.close();
      directoryLock.close();
    }
  }

  @Override
  public String toString() {
    return "Journal{" + dir + ", " + state + ", cycles=" + catalog.size() + "}";
  }

  private final class Progress {
    final long startNanos;
    final long intervalNanos = options.getProgressInterval().toNanos();
    final ReplayProgressListener listener = options.getProgressListener();
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
      listener.onProgress(dir, new ReplayProgress(entries, records, d.liveIds, percent, rate,
          Duration.ofNanos(elapsed)), done);
    }
  }

  private static final class OpenFileCounter implements StoreFileListener {
    private final AtomicInteger open;

    OpenFileCounter(AtomicInteger open) {
      this.open = open;
    }

    @Override
    public void onAcquired(int cycle, File file) {
      open.incrementAndGet();
    }

    @Override
    public void onReleased(int cycle, File file) {
      open.decrementAndGet();
    }
  }
}
