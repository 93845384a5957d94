package io.github.vertxdedup.journal;

import io.github.vertxdedup.time.DedupClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link Journal} is opened. Fluent setters validate at once and return this object; {@link Journal#open}
 * copies the options, so later changes do not affect an open journal. Not thread-safe.
 *
 * <p>Follows the shape of Vert.x options classes ({@code DEFAULT_*} constants, a copy constructor, setters that
 * return {@code this}) without their JSON form: this module has no Vert.x dependency.
 */
public final class JournalOptions {

  /** Default roll cycle: 5 minutes, the shortest production cycle at least {@code W / 4} for a 10-minute window. */
  public static final Duration DEFAULT_ROLL_CYCLE = Duration.ofMinutes(5);

  /**
   * Default sync policy: {@link SyncPolicy#ASYNC}. Appends never wait for the disk, and a power loss costs at most
   * about one {@link #DEFAULT_SYNC_INTERVAL} of answered ids; a process crash costs none.
   */
  public static final SyncPolicy DEFAULT_SYNC_POLICY = SyncPolicy.ASYNC;

  /** Default interval of the background sync under {@link SyncPolicy#ASYNC}: 1 second. */
  public static final Duration DEFAULT_SYNC_INTERVAL = Duration.ofSeconds(1);

  /**
   * Default time Chronicle waits on what a dead writer left behind (an excerpt header it never finished, a cycle
   * file it never initialised) before it repairs it: 500 ms. The directory lock proves the writer is dead, so a
   * short wait is safe; Chronicle's own default is 10 s (and 15 s for its write lock).
   */
  public static final Duration DEFAULT_CHRONICLE_TIMEOUT = Duration.ofMillis(500);

  /** Default interval between replay progress reports: 1 second. */
  public static final Duration DEFAULT_PROGRESS_INTERVAL = Duration.ofSeconds(1);

  /** Default clock: the system clock, {@link DedupClock#system()}. */
  public static final DedupClock DEFAULT_CLOCK = DedupClock.system();

  /**
   * Default progress listener, on the {@code io.github.vertxdedup.journal} logger (SLF4J): one {@code INFO} line per
   * report while the replay runs (only a replay longer than the progress interval has one), e.g.
   * {@code journal /data/p-0: replay read 1,048,576 entries from 16,384 records, 41.2% of the records,
   * 2,301,220 entries/s, 455 ms}, and {@code replay done, ...} at {@code DEBUG} for the final report: the journal's
   * owner logs the readiness of its window at {@code INFO}, with what it holds.
   */
  public static final ReplayProgressListener DEFAULT_PROGRESS_LISTENER = JournalOptions::logProgress;

  /** Longest sync interval accepted: 1 hour. */
  public static final Duration MAX_SYNC_INTERVAL = Duration.ofHours(1);

  /** Shortest Chronicle timeout accepted: 10 ms. */
  public static final Duration MIN_CHRONICLE_TIMEOUT = Duration.ofMillis(10);

  /** Longest Chronicle timeout accepted: 60 s. */
  public static final Duration MAX_CHRONICLE_TIMEOUT = Duration.ofSeconds(60);

  private static final Logger LOG = LoggerFactory.getLogger("io.github.vertxdedup.journal");

  private Duration rollCycle = DEFAULT_ROLL_CYCLE;
  private SyncPolicy syncPolicy = DEFAULT_SYNC_POLICY;
  private Duration syncInterval = DEFAULT_SYNC_INTERVAL;
  private Duration chronicleTimeout = DEFAULT_CHRONICLE_TIMEOUT;
  private Duration progressInterval = DEFAULT_PROGRESS_INTERVAL;
  private DedupClock clock = DEFAULT_CLOCK;
  private RollSnapshotSource rollSnapshotSource = RollSnapshotSource.NONE;
  private ReplayProgressListener progressListener = DEFAULT_PROGRESS_LISTENER;

  /** Creates options with every default. */
  public JournalOptions() {
  }

  /**
   * Copies options.
   *
   * @param other the options to copy
   */
  public JournalOptions(JournalOptions other) {
    Objects.requireNonNull(other, "other");
    this.rollCycle = other.rollCycle;
    this.syncPolicy = other.syncPolicy;
    this.syncInterval = other.syncInterval;
    this.chronicleTimeout = other.chronicleTimeout;
    this.progressInterval = other.progressInterval;
    this.clock = other.clock;
    this.rollSnapshotSource = other.rollSnapshotSource;
    this.progressListener = other.progressListener;
  }

  /**
   * Returns the roll cycle lengths a journal supports: 1 s (for tests), 1, 5, 10, 20 and 30 min, 1, 2, 4 and 6 h,
   * and 1 day (Chronicle's roll cycles of those lengths). There is no weekly cycle: Chronicle cannot parse the names
   * of its weekly files ({@code 2026W49.cq4}) back into cycles, so a weekly journal could not be reopened.
   *
   * @return the lengths, shortest first
   */
  public static List<Duration> supportedRollCycles() {
    return RollCycleChoice.supported();
  }

  /**
   * Chooses the roll cycle for a dedup window {@code W}: the shortest supported cycle of at least {@code W / 4} and
   * at least a minute, so a cycle file can be deleted at most about {@code W + W / 4} after it was started while a
   * journal holds at most about five files' worth of live ids plus the current one. For a window of more than 4
   * days, the longest (1 day): a window of {@code W} days then keeps about {@code W + 1} files (367 for the
   * longest window of 366 days), each opened and its first records read once at {@link Journal#open}.
   *
   * @param window the dedup window {@code W}; positive
   * @return a supported roll cycle length
   * @throws IllegalArgumentException if {@code window} is not positive
   */
  public static Duration rollCycleFor(Duration window) {
    Objects.requireNonNull(window, "window");
    if (window.isZero() || window.isNegative()) {
      throw new IllegalArgumentException("window must be > 0 but was " + window);
    }
    return RollCycleChoice.forWindow(window);
  }

  /**
   * Returns the roll cycle length.
   *
   * @return the length of one cycle file
   */
  public Duration getRollCycle() {
    return rollCycle;
  }

  /**
   * Sets how much time one cycle file covers. Retention deletes whole files, so a file stays until every entry in it
   * has expired: shorter cycles free disk sooner, at the cost of more files. See {@link #rollCycleFor(Duration)}.
   *
   * @param rollCycle one of {@link #supportedRollCycles()}
   * @return these options
   * @throws IllegalArgumentException if the length is not supported (the message lists those that are)
   */
  public JournalOptions setRollCycle(Duration rollCycle) {
    Objects.requireNonNull(rollCycle, "rollCycle");
    RollCycleChoice.of(rollCycle);
    this.rollCycle = rollCycle;
    return this;
  }

  /**
   * Returns the sync policy.
   *
   * @return the policy
   */
  public SyncPolicy getSyncPolicy() {
    return syncPolicy;
  }

  /**
   * Sets when appended records are forced to disk; see {@link SyncPolicy}.
   *
   * @param syncPolicy the policy
   * @return these options
   */
  public JournalOptions setSyncPolicy(SyncPolicy syncPolicy) {
    this.syncPolicy = Objects.requireNonNull(syncPolicy, "syncPolicy");
    return this;
  }

  /**
   * Returns the background sync interval (used under {@link SyncPolicy#ASYNC}).
   *
   * @return the interval
   */
  public Duration getSyncInterval() {
    return syncInterval;
  }

  /**
   * Sets how often the background sync runs under {@link SyncPolicy#ASYNC}: the most a power loss can cost.
   *
   * @param syncInterval positive, at most {@link #MAX_SYNC_INTERVAL}
   * @return these options
   * @throws IllegalArgumentException if out of range
   */
  public JournalOptions setSyncInterval(Duration syncInterval) {
    Objects.requireNonNull(syncInterval, "syncInterval");
    if (syncInterval.compareTo(Duration.ofMillis(1)) < 0 || syncInterval.compareTo(MAX_SYNC_INTERVAL) > 0) {
      throw new IllegalArgumentException(
          "syncInterval must be in [1ms, " + MAX_SYNC_INTERVAL + "] but was " + syncInterval);
    }
    this.syncInterval = syncInterval;
    return this;
  }

  /**
   * Returns how long Chronicle waits on a dead writer's leftovers.
   *
   * @return the timeout
   */
  public Duration getChronicleTimeout() {
    return chronicleTimeout;
  }

  /**
   * Sets Chronicle's {@code timeoutMS}: how long it waits on an excerpt or cycle file that a writer began and never
   * finished before repairing it. Only a dead writer leaves one (the directory lock keeps live ones out), so this is
   * the worst extra time of the first append after a crash; see {@link #DEFAULT_CHRONICLE_TIMEOUT}.
   *
   * @param chronicleTimeout in [{@link #MIN_CHRONICLE_TIMEOUT}, {@link #MAX_CHRONICLE_TIMEOUT}]
   * @return these options
   * @throws IllegalArgumentException if out of range
   */
  public JournalOptions setChronicleTimeout(Duration chronicleTimeout) {
    Objects.requireNonNull(chronicleTimeout, "chronicleTimeout");
    if (chronicleTimeout.compareTo(MIN_CHRONICLE_TIMEOUT) < 0
        || chronicleTimeout.compareTo(MAX_CHRONICLE_TIMEOUT) > 0) {
      throw new IllegalArgumentException("chronicleTimeout must be in [" + MIN_CHRONICLE_TIMEOUT + ", "
          + MAX_CHRONICLE_TIMEOUT + "] but was " + chronicleTimeout);
    }
    this.chronicleTimeout = chronicleTimeout;
    return this;
  }

  /**
   * Returns the interval between replay progress reports.
   *
   * @return the interval
   */
  public Duration getProgressInterval() {
    return progressInterval;
  }

  /**
   * Sets the interval between replay progress reports. Zero reports at every check (every 256 records; for tests).
   *
   * @param progressInterval zero or positive
   * @return these options
   * @throws IllegalArgumentException if negative
   */
  public JournalOptions setProgressInterval(Duration progressInterval) {
    Objects.requireNonNull(progressInterval, "progressInterval");
    if (progressInterval.isNegative()) {
      throw new IllegalArgumentException("progressInterval must be >= 0 but was " + progressInterval);
    }
    this.progressInterval = progressInterval;
    return this;
  }

  /**
   * Returns the replay progress listener.
   *
   * @return the listener
   */
  public ReplayProgressListener getProgressListener() {
    return progressListener;
  }

  /**
   * Sets who receives replay progress.
   *
   * @param progressListener the listener; {@link #DEFAULT_PROGRESS_LISTENER} logs
   * @return these options
   */
  public JournalOptions setProgressListener(ReplayProgressListener progressListener) {
    this.progressListener = Objects.requireNonNull(progressListener, "progressListener");
    return this;
  }

  /**
   * Returns the clock.
   *
   * @return the clock, in epoch milliseconds
   */
  public DedupClock getClock() {
    return clock;
  }

  /**
   * Sets the clock that decides roll cycles and what has expired: epoch milliseconds. Pass the owner's clock (for
   * the window, the same {@link DedupClock}) so that the journal and the window agree, and a manual clock in tests.
   * The journal never lets its own time run backwards: a reading earlier than the last one, or earlier than the
   * start of the newest cycle on disk, counts as that.
   *
   * @param clock the clock; called on the appending thread and by replay and retention
   * @return these options
   */
  public JournalOptions setClock(DedupClock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  /**
   * Returns the roll snapshot source.
   *
   * @return the source
   */
  public RollSnapshotSource getRollSnapshotSource() {
    return rollSnapshotSource;
  }

  /**
   * Sets the source of the claims and offsets each new cycle starts with; see {@link RollSnapshotSource}. Without
   * one ({@link RollSnapshotSource#NONE}), deleting expired cycles forgets the claims and offsets written in them.
   *
   * @param rollSnapshotSource the source
   * @return these options
   */
  public JournalOptions setRollSnapshotSource(RollSnapshotSource rollSnapshotSource) {
    this.rollSnapshotSource = Objects.requireNonNull(rollSnapshotSource, "rollSnapshotSource");
    return this;
  }

  /*
   * Only what the replay knows while it reads: entries and records read, the share of the records, the rate and the
   * time. Not ReplayProgress.liveIds: it counts unexpired accepts only (0 for a journal of claims and commits, as
   * effect-first writes), so it is no count of the ids the window will hold; the owner logs that once recovery has
   * restored them.
   */
  private static void logProgress(Path journal, ReplayProgress p, boolean done) {
    (done ? LOG.atDebug() : LOG.atInfo()).setMessage(() -> String.format(
        "journal %s: replay %s %,d entries from %,d records, %.1f%% of the records, %,.0f entries/s, %d ms",
        journal, done ? "done," : "read", p.entriesRead(), p.recordsRead(), p.percent(), p.entriesPerSecond(),
        p.elapsed().toMillis())).log();
  }

  @Override
  public String toString() {
    return "JournalOptions{rollCycle=" + rollCycle + ", syncPolicy=" + syncPolicy + ", syncInterval=" + syncInterval
        + ", chronicleTimeout=" + chronicleTimeout + ", progressInterval=" + progressInterval + "}";
  }
}
