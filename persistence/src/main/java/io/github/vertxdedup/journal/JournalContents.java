package io.github.vertxdedup.journal;

import io.github.vertxdedup.journal.internal.Recovery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

/**
 * What a journal directory holds at one instant, as a restart of its owner at that instant would rebuild it: the live
 * entries (ids and keys), the claims still open and the committed offsets. {@link #read} opens the journal, replays it
 * through the recovery a partition runs at a restart (the one place that says what the records mean: an accept or a
 * commit whose expiry has passed is not live, a commit makes its claim's id and key live, a claim neither committed
 * nor released stays open until its lease ends, the highest offset per topic-partition counts) and closes it again; it
 * appends nothing.
 *
 * <p>For tools that look into a journal without owning it (the journal inspector, tests). A partition recovers through
 * its own {@link Journal#replay} with that recovery, streaming the live entries into its window.
 * {@link #deleteIfForgotten} judges a directory the same way and deletes it if a restart would remember nothing of it
 * (for an owner that removes the journals of partitions it no longer has).
 *
 * <p>Like a restart, {@link #read} takes the directory's lock (so read a stopped owner's journal, or a copy of its
 * directory) and repairs what a killed writer left at the tail. {@link #readOnly} reads through a read-only view
 * instead: no lock, no file written, so it can read the journal of a running owner. The result is immutable, so
 * thread-safe.
 */
public final class JournalContents {

  private final long nowMs;
  private final ReplayResult replay;
  private final List<ClaimEntry> openClaims;
  private final List<OffsetCommit> offsets;
  private final long cycleFiles;

  private JournalContents(long nowMs, ReplayResult replay, List<ClaimEntry> openClaims, List<OffsetCommit> offsets,
      long cycleFiles) {
    this.nowMs = nowMs;
    this.replay = replay;
    this.openClaims = openClaims;
    this.offsets = offsets;
    this.cycleFiles = cycleFiles;
  }

  /**
   * Reads the journal in {@code dir} as its owner would recover it at {@code nowMs}: every record from the oldest
   * cycle that may hold a live entry at {@code nowMs} goes to {@code records} as it is read, and every entry a restart
   * at {@code nowMs} would remember to {@code live} (see the type comment). Blocking, O(records read); the progress of
   * the replay is not reported.
   *
   * @param dir a journal directory, holding its cycle files
   * @param windowMs the owner's window, milliseconds, {@code > 0}: it chooses the journal's roll cycle
   *     ({@link JournalOptions#rollCycleFor}) and is the default remember-for of a committed claim
   * @param nowMs the instant to judge at, epoch milliseconds, {@code >= 0}: entries expired by then are not live, and
   *     claims whose lease ended by then are not open
   * @param live receives the live entries, in journal order (an id and its key as two entries; an entry may arrive
   *     more than once)
   * @param records receives every record and entry as it is read, as from {@link Journal#replay}
   * @return the open claims, offsets and replay counts
   * @throws IllegalArgumentException if {@code windowMs} or {@code nowMs} is out of range, or {@code dir} holds no
   *     cycle file (it is not a journal directory)
   * @throws JournalLockedException if the journal's owner (or another reader) holds the directory
   * @throws UnknownFormatVersionException if a record has a format version this reader does not know
   * @throws JournalException if a record with a valid checksum has a type this version does not define
   * @throws UncheckedIOException if the directory's lock file cannot be created
   * @throws NullPointerException if an argument is null
   * @throws RuntimeException whatever {@code live} or {@code records} throws, unchanged
   */
  public static JournalContents read(Path dir, long windowMs, long nowMs, LiveEntrySink live,
      JournalVisitor records) {
    checkReadArguments(dir, windowMs, nowMs, live, records);
    Recovery recovery = new Recovery(nowMs, windowMs, live);
    ReplayResult result;
    try (Journal journal = Journal.open(dir, readOptions(windowMs, nowMs))) {
      result = journal.replay(new Both(recovery, records));
    }
    return contents(dir, nowMs, result, recovery);
  }

  /*
   * The read-only view. The owner's journal holds the directory lock (journal.lock, an OS file lock) for as long as
   * it is open, so read() cannot run beside it. This view takes neither that lock nor Chronicle's write lock (a word
   * in metadata.cq4t that only appenders take): Chronicle's read-only queue maps the files for reading, and its
   * tailer stops at the first excerpt whose header is not complete, so it sees every record the owner finished
   * appending before the tailer reached it and nothing half-written. It repairs nothing (read() clears a dead
   * writer's locks and discards its unfinished record, cycle file or missing last excerpt); a tailer stops at each of
   * those as a restart's replay would, so the records it sees are the same.
   */
  /**
   * Reads the journal in {@code dir} as {@link #read} does, but through a read-only view: it takes no lock and writes
   * nothing to any file, so it can read the journal of a running owner (which holds the directory's lock). It sees the
   * records that were complete when its replay reached them: an owner's later appends are not in the result, and a
   * record the owner is appending is not delivered half-written. A restart at {@code nowMs} of an owner that had
   * stopped at the instant the replay ended would rebuild what the result says. Blocking, O(records read).
   *
   * <p>A dead writer's leftovers are not repaired (a stopped owner's journal is left exactly as it is): an unfinished
   * last record is not delivered, as a restart would discard it; a cycle file whose creation a killed writer never
   * finished is not deleted, and Chronicle may wait on it (up to {@link JournalOptions#DEFAULT_CHRONICLE_TIMEOUT})
   * or fail to read it: read such a journal with {@link #read}, which repairs it, once its owner is stopped.
   *
   * @param dir a journal directory, holding its cycle files and Chronicle's {@code metadata.cq4t}
   * @param windowMs the owner's window, milliseconds, {@code > 0} (see {@link #read})
   * @param nowMs the instant to judge at, epoch milliseconds, {@code >= 0} (see {@link #read})
   * @param live receives the live entries, as from {@link #read}
   * @param records receives every record and entry as it is read, as from {@link #read}
   * @return the open claims, offsets and replay counts
   * @throws IllegalArgumentException if {@code windowMs} or {@code nowMs} is out of range, or {@code dir} holds no
   *     cycle file (it is not a journal directory)
   * @throws UnknownFormatVersionException if a record has a format version this reader does not know
   * @throws JournalException if a record with a valid checksum has a type this version does not define
   * @throws NullPointerException if an argument is null
   * @throws RuntimeException whatever {@code live} or {@code records} throws, unchanged; or Chronicle's failure to
   *     open a file it cannot read (a cycle file a killed writer never finished)
   */
  public static JournalContents readOnly(Path dir, long windowMs, long nowMs, LiveEntrySink live,
      JournalVisitor records) {
    checkReadArguments(dir, windowMs, nowMs, live, records);
    Path abs = dir.toAbsolutePath().normalize();
    Recovery recovery = new Recovery(nowMs, windowMs, live);
    ReplayResult result;
    JournalQueue q = JournalQueue.open(abs, readOptions(windowMs, nowMs), true);
    try {
      JournalReader reader = new JournalReader(q);
      reader.scanCycles();
      int newest = q.catalog.newest();
      if (newest != CycleCatalog.NONE) {
        q.time.floor(q.epochMs + newest * q.cycleMs); // as Journal's open: the replay judges at this time or later
      }
      result = reader.replay(new Both(recovery, records), () -> { });
    } finally {
      q.queue.close();
    }
    return contents(abs, nowMs, result, recovery);
  }

  private static void checkReadArguments(Path dir, long windowMs, long nowMs, LiveEntrySink live,
      JournalVisitor records) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(live, "live");
    Objects.requireNonNull(records, "records");
    if (windowMs <= 0) {
      throw new IllegalArgumentException("windowMs must be > 0 but was " + windowMs);
    }
    if (nowMs < 0) {
      throw new IllegalArgumentException("nowMs must be >= 0 (epoch milliseconds) but was " + nowMs);
    }
    if (!isJournalDirectory(dir)) {
      // Journal.open would create the directory and a lock file: a reader must not.
      throw new IllegalArgumentException("dir must be a journal directory (with " + SingleChronicleQueue.SUFFIX
          + " cycle files) but " + dir + " has none");
    }
  }

  private static JournalContents contents(Path dir, long nowMs, ReplayResult result, Recovery recovery) {
    List<ClaimEntry> open = new ArrayList<>();
    recovery.forEachOpenClaim(nowMs, open::add);
    return new JournalContents(nowMs, result, List.copyOf(open), List.copyOf(recovery.offsets().toList()),
        countCycleFiles(dir));
  }

  /**
   * What {@link #deleteIfForgotten} did.
   *
   * @param deleted whether the directory was deleted
   * @param keptUntilMs if it was not: an instant (epoch milliseconds of the owner's clock) until which the journal
   *     still remembers something: the expiry of a live entry, or the lease end of an open claim, it found; a later
   *     call before then would keep it again, unless the journal was written to meanwhile. If it was deleted: the
   *     instant it was judged at
   */
  public record Removal(boolean deleted, long keptUntilMs) {
  }

  /**
   * Deletes the journal directory {@code dir} if a restart of its owner at {@code nowMs} would remember nothing of it:
   * no live entry (every accept and commit has expired) and no open claim. Judged as {@link #read} judges, by the
   * recovery a partition runs at a restart, under the directory's lock, which is held until the directory is gone:
   * no journal can be opened on it meanwhile, and a directory another journal holds (in this process or another) is
   * not touched. The recovery stops at the first live entry, so a journal that still remembers costs a read up to
   * that entry; one that remembers nothing costs a read of its newest cycle file (and of the cycles its snapshot
   * needs). Every file in the directory goes, the lock file last, then the directory. Blocking (file I/O): call it
   * off the event loop.
   *
   * <p>What is lost with a directory deleted: only what a restart would not have used for deciding: expired ids, and
   * the offsets the journal recorded (an owner uses those where Kafka has none).
   *
   * @param dir a journal directory: one that holds the journal's lock file or a cycle file
   * @param windowMs the owner's window, milliseconds, {@code > 0}: it chooses the journal's roll cycle
   *     ({@link JournalOptions#rollCycleFor}) and is the default remember-for of a committed claim
   * @param nowMs the instant to judge at, epoch milliseconds of the owner's clock, {@code >= 0}
   * @return whether the directory was deleted and, if not, until when it surely remembers something; also not
   *     deleted (kept until {@code nowMs}) if another owner created its lock file again while the files were being
   *     deleted: that owner starts from an empty journal, the same memory
   * @throws IllegalArgumentException if {@code windowMs} or {@code nowMs} is out of range, or {@code dir} is not a
   *     journal directory
   * @throws JournalLockedException if another journal (in this or another process) holds the directory
   * @throws UnknownFormatVersionException if a record has a format version this reader does not know; nothing is
   *     deleted
   * @throws JournalException if a record with a valid checksum has a type this version does not define; nothing is
   *     deleted
   * @throws UncheckedIOException if the lock file cannot be opened or a file cannot be deleted (the files deleted
   *     before it are gone: a journal that remembered nothing)
   * @throws NullPointerException if {@code dir} is null
   */
  public static Removal deleteIfForgotten(Path dir, long windowMs, long nowMs) {
    Objects.requireNonNull(dir, "dir");
    if (windowMs <= 0) {
      throw new IllegalArgumentException("windowMs must be > 0 but was " + windowMs);
    }
    if (nowMs < 0) {
      throw new IllegalArgumentException("nowMs must be >= 0 (epoch milliseconds) but was " + nowMs);
    }
    Path abs = dir.toAbsolutePath().normalize();
    Path lockFile = abs.resolve(DirectoryLock.FILE_NAME);
    if (!Files.isRegularFile(lockFile) && !isJournalDirectory(abs)) {
      // DirectoryLock.acquire would create a lock file in a directory that is not a journal's.
      throw new IllegalArgumentException("dir must be a journal directory (with " + DirectoryLock.FILE_NAME + " or "
          + SingleChronicleQueue.SUFFIX + " cycle files) but " + dir + " has neither");
    }
    DirectoryLock lock = DirectoryLock.acquire(abs);
    try {
      try (Journal journal = Journal.openLocked(abs, readOptions(windowMs, nowMs), lock)) {
        Recovery recovery = new Recovery(nowMs, windowMs, (fp, hash, firstSeenMs, expiresAtMs) -> {
          throw new StillRemembered(expiresAtMs);
        });
        journal.replay(recovery);
        long[] leaseEnd = {Long.MIN_VALUE};
        recovery.forEachOpenClaim(nowMs, c -> leaseEnd[0] = Math.max(leaseEnd[0], c.leaseEndMs()));
        if (leaseEnd[0] != Long.MIN_VALUE) {
          return new Removal(false, leaseEnd[0]);
        }
      } catch (StillRemembered e) {
        return new Removal(false, e.untilMs);
      }
      return deleteTree(abs, lockFile) ? new Removal(true, nowMs) : new Removal(false, nowMs);
    } finally {
      lock.close();
    }
  }

  /**
   * Deletes everything in {@code dir}, the lock file last, then {@code dir}.
   *
   * @return false if {@code dir} was not empty at the end: another opener created its lock file again
   */
  private static boolean deleteTree(Path dir, Path lockFile) {
    try {
      List<Path> files;
      try (Stream<Path> s = Files.walk(dir)) {
        files = s.filter(f -> !f.equals(dir) && !f.equals(lockFile)).sorted(Comparator.reverseOrder()).toList();
      }
      for (Path f : files) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(lockFile);
      try {
        Files.delete(dir);
      } catch (DirectoryNotEmptyException e) {
        return false;
      }
      return true;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete the journal directory " + dir, e);
    }
  }

  /** Thrown by the recovery's sink at the first live entry: the journal still remembers something. */
  private static final class StillRemembered extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final long untilMs;

    StillRemembered(long untilMs) {
      super(null, null, false, false);
      this.untilMs = untilMs;
    }
  }

  /** Options to read a journal at {@code nowMs} without writing to it: its roll cycle, no sync, no progress. */
  private static JournalOptions readOptions(long windowMs, long nowMs) {
    return new JournalOptions()
        .setRollCycle(JournalOptions.rollCycleFor(Duration.ofMillis(windowMs)))
        .setSyncPolicy(SyncPolicy.NONE)
        .setClock(() -> nowMs)
        .setProgressListener((d, p, done) -> { });
  }

  /**
   * Returns whether {@code dir} is a journal directory: a directory that holds at least one cycle file. Blocking
   * (lists the directory).
   *
   * @param dir a path
   * @return false if it is not a directory, cannot be listed or holds no cycle file
   * @throws NullPointerException if {@code dir} is null
   */
  public static boolean isJournalDirectory(Path dir) {
    Objects.requireNonNull(dir, "dir");
    return countCycleFiles(dir) > 0;
  }

  private static long countCycleFiles(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(SingleChronicleQueue.SUFFIX)).count();
    } catch (IOException | UncheckedIOException e) {
      return 0;
    }
  }

  /** @return the instant the contents were judged at, epoch milliseconds */
  public long nowMs() {
    return nowMs;
  }

  /** @return what the replay read: cycles, records, entries per type, torn records */
  public ReplayResult replay() {
    return replay;
  }

  /**
   * Returns the cycle files on disk once the read closed the journal, the deletable ones a replay skips included (a
   * file whose creation a killed writer never finished is deleted by the read, as by any open).
   *
   * @return the count
   */
  public long cycleFiles() {
    return cycleFiles;
  }

  /**
   * Returns the claims open at {@link #nowMs()}: neither committed nor released, lease not ended. Each is in the
   * layout of the current format: claim time, payload hash and remember-until in their columns, a claim of format
   * version 1 included.
   *
   * @return an unmodifiable list, in no particular order
   */
  public List<ClaimEntry> openClaims() {
    return openClaims;
  }

  /**
   * Returns the committed offsets, the highest per topic-partition.
   *
   * @return an unmodifiable list, sorted by topic and partition
   */
  public List<OffsetCommit> offsets() {
    return offsets;
  }

  /** Hands each record to the recovery, then to the caller's visitor. */
  private static final class Both implements JournalVisitor {
    private final JournalVisitor first;
    private final JournalVisitor second;

    Both(JournalVisitor first, JournalVisitor second) {
      this.first = first;
      this.second = second;
    }

    @Override
    public void onRecord(long index, int length) {
      first.onRecord(index, length);
      second.onRecord(index, length);
    }

    @Override
    public void onAccept(long fingerprint, long keyFingerprint, long payloadHash, long acceptedAtMs,
        long expiresAtMs) {
      first.onAccept(fingerprint, keyFingerprint, payloadHash, acceptedAtMs, expiresAtMs);
      second.onAccept(fingerprint, keyFingerprint, payloadHash, acceptedAtMs, expiresAtMs);
    }

    @Override
    public void onClaim(ClaimEntry claim) {
      first.onClaim(claim);
      second.onClaim(claim);
    }

    @Override
    public void onCommit(long fingerprint, long token, long expiresAtMs) {
      first.onCommit(fingerprint, token, expiresAtMs);
      second.onCommit(fingerprint, token, expiresAtMs);
    }

    @Override
    public void onRelease(long fingerprint, long token) {
      first.onRelease(fingerprint, token);
      second.onRelease(fingerprint, token);
    }

    @Override
    public void onOffsetCommit(String topic, int partition, long offset) {
      first.onOffsetCommit(topic, partition, offset);
      second.onOffsetCommit(topic, partition, offset);
    }
  }
}
