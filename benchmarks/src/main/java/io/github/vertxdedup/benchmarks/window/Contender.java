package io.github.vertxdedup.benchmarks.window;

/**
 * The structures of the side-by-side comparison, by the names the benchmark, the footprint run and the report use.
 * {@link #DEDUP_WINDOW} is the baseline every ratio is taken against.
 */
public enum Contender {

  /** Our {@code DedupWindow}, not presized (the table starts small and doubles). */
  DEDUP_WINDOW("dedupWindow", "DedupWindow (ours)") {
    @Override
    public DedupContender create(Workload workload, SimulatedClock clock) {
      return new DedupWindowContender(workload, clock, 0);
    }
  },
  /** Our {@code DedupWindow} with {@code expectedIds} = the workload's held ids at peak. */
  DEDUP_WINDOW_PRESIZED("dedupWindowPresized", "DedupWindow, presized") {
    @Override
    public DedupContender create(Workload workload, SimulatedClock clock) {
      return new DedupWindowContender(workload, clock, workload.expectedHeldIds());
    }
  },
  /**
   * Our {@code DedupWindow}, not presized, fed through {@code checkBatch} in batches of {@link #POLL_BATCH} events
   * (a Kafka poll's default {@code max.poll.records}), each batch judged at the arrival time of its last event.
   */
  DEDUP_WINDOW_BATCH("dedupWindowBatch", "DedupWindow, checkBatch (500 per poll)") {
    @Override
    public DedupContender create(Workload workload, SimulatedClock clock) {
      return new DedupWindowContender(workload, clock, 0, true);
    }
  },
  /**
   * As {@link #DEDUP_WINDOW_BATCH}, with {@code DedupWindow.upkeep} after every batch (a partition runs it on a timer
   * between polls), timed apart from {@code checkBatch}: the sweep and growth off the batch's path.
   */
  DEDUP_WINDOW_BATCH_UPKEEP("dedupWindowBatchUpkeep", "DedupWindow, checkBatch (500 per poll), upkeep between polls") {
    @Override
    public DedupContender create(Workload workload, SimulatedClock clock) {
      return new DedupWindowContender(workload, clock, 0, true, true);
    }
  },
  /** The textbook bucket ring: Agrona {@code LongHashSet} + one {@code LongArrayList} per bucket. */
  DIRECT_DESIGN("directDesign", "Direct design (Agrona)") {
    @Override
    public DedupContender create(Workload workload, SimulatedClock clock) {
      return new DirectDesignWindow(workload, clock);
    }
  },
  /** {@code HashSet<Long>} + {@code ArrayDeque} of per-bucket {@code ArrayList<Long>}. */
  JDK_PORT("jdkPort", "JDK port (HashSet<Long>)") {
    @Override
    public DedupContender create(Workload workload, SimulatedClock clock) {
      return new JdkPortWindow(workload, clock);
    }
  },
  /** Caffeine {@code Cache<Long, Boolean>}, {@code expireAfterWrite(W)}, {@code putIfAbsent}. */
  CAFFEINE("caffeine", "Caffeine") {
    @Override
    public DedupContender create(Workload workload, SimulatedClock clock) {
      return new CaffeineContender(workload, clock);
    }
  };

  /** Events per {@code checkBatch} call for {@link #DEDUP_WINDOW_BATCH}: Kafka's default {@code max.poll.records}. */
  public static final int POLL_BATCH = 500;

  private final String key;
  private final String label;

  Contender(String key, String label) {
    this.key = key;
    this.label = label;
  }

  /** @return the short name: the benchmark's {@code contender} parameter value and the report's key */
  public String key() {
    return key;
  }

  /** @return the name shown in tables and plots */
  public String label() {
    return label;
  }

  /**
   * Creates a fresh, empty structure.
   *
   * @param workload gives {@code W}, {@code b} and the presizing hint
   * @param clock the simulated clock it reads
   * @return the new structure
   */
  public abstract DedupContender create(Workload workload, SimulatedClock clock);

  /**
   * Finds a contender by its key.
   *
   * @param key as {@link #key()}
   * @return the contender
   * @throws IllegalArgumentException if no contender has that key
   */
  public static Contender ofKey(String key) {
    for (Contender c : values()) {
      if (c.key.equals(key)) {
        return c;
      }
    }
    throw new IllegalArgumentException("contender must be one of dedupWindow, dedupWindowPresized, dedupWindowBatch,"
        + " dedupWindowBatchUpkeep, directDesign, jdkPort, caffeine but was " + key);
  }

  /**
   * Feeds a whole stream to a structure, setting the clock to each event's arrival time first.
   *
   * @param stream the events
   * @param structure the structure under test, created with {@code clock}
   * @param clock the clock the structure reads
   * @return the number of events accepted
   */
  public static long run(EventStream stream, DedupContender structure, SimulatedClock clock) {
    final long[] ids = stream.fingerprints();
    final int[] offsets = stream.offsetsMs();
    long accepted = 0;
    if (structure instanceof BatchContender batched && batched.batches()) {
      for (int from = 0; from < ids.length; from += POLL_BATCH) {
        int n = Math.min(POLL_BATCH, ids.length - from);
        clock.setMs(EventStream.START_MS + offsets[from + n - 1]);
        accepted += batched.firstSeenBatch(ids, from, n);
      }
      return accepted;
    }
    for (int i = 0; i < ids.length; i++) {
      clock.setMs(EventStream.START_MS + offsets[i]);
      if (structure.firstSeen(ids[i])) {
        accepted++;
      }
    }
    return accepted;
  }
}
