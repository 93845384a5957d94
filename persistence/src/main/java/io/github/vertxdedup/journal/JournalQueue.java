package io.github.vertxdedup.journal;

import java.io.File;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.RollingResourcesCache;
import net.openhft.chronicle.queue.impl.StoreFileListener;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the parts of one open {@link Journal} share: the directory, the options, the Chronicle queue and its roll
 * cycle, the journal's time, the catalog of cycle files and the journal's life-cycle state. The writing side
 * ({@link JournalWriter} and its appenders), {@link JournalSync}, the reader and retention each hold it.
 *
 * <p>Thread-safety: the fields are final; {@link #state} is volatile and changes only under the {@link Journal}'s
 * monitor; {@link CycleCatalog} and {@link JournalTime} are thread-safe.
 */
final class JournalQueue {

  /** The journal's life cycle: opened, replayed (appends allowed), closed. */
  enum State { OPENED, READY, CLOSED }

  static final Logger LOG = LoggerFactory.getLogger("io.github.vertxdedup.journal");

  final Path dir;
  final JournalOptions options;
  final SingleChronicleQueue queue;
  final RollCycle rollCycle;
  final long epochMs;
  final long cycleMs;
  final JournalTime time;
  final CycleCatalog catalog = new CycleCatalog();
  final AtomicInteger openCycleFiles;
  private final RollingResourcesCache cycleFiles;

  volatile State state = State.OPENED;

  private JournalQueue(Path dir, JournalOptions options, SingleChronicleQueue queue, RollCycle rollCycle,
      JournalTime time, AtomicInteger openCycleFiles) {
    this.dir = dir;
    this.options = options;
    this.queue = queue;
    this.rollCycle = rollCycle;
    this.time = time;
    this.openCycleFiles = openCycleFiles;
    this.epochMs = queue.epoch();
    this.cycleMs = rollCycle.lengthInMillis();
    File dirFile = dir.toFile();
    this.cycleFiles = new RollingResourcesCache(rollCycle, epochMs,
        name -> new File(dirFile, name + SingleChronicleQueue.SUFFIX),
        file -> file.getName().substring(0, file.getName().length() - SingleChronicleQueue.SUFFIX.length()));
  }

  /**
   * Builds the Chronicle queue in {@code dir}: the journal's roll cycle and time, {@link SyncMode#NONE} (the journal
   * syncs from another thread, see {@link Syncer}), and a listener that counts the cycle files Chronicle holds open.
   * Blocking. Closes the queue again if anything after building it fails.
   */
  static JournalQueue open(Path dir, JournalOptions options) {
    return open(dir, options, false);
  }

  /**
   * Builds the Chronicle queue in {@code dir} as {@link #open(Path, JournalOptions)} does, or, if {@code readOnly},
   * Chronicle's read-only queue: its files are mapped for reading only, so it writes nothing (no lock word, no header,
   * no new cycle file) and can be built while the owner appends. Blocking.
   */
  static JournalQueue open(Path dir, JournalOptions options, boolean readOnly) {
    RollCycle rollCycle = RollCycleChoice.of(options.getRollCycle());
    JournalTime time = new JournalTime(options.getClock());
    AtomicInteger openCycleFiles = new AtomicInteger();
    SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(dir)
        .rollCycle(rollCycle)
        .timeProvider(time)
        .timeoutMS(options.getChronicleTimeout().toMillis())
        .syncMode(SyncMode.NONE)
        .storeFileListener(new OpenFileCounter(openCycleFiles))
        .readOnly(readOnly)
        .build();
    try {
      return new JournalQueue(dir, options, queue, rollCycle, time, openCycleFiles);
    } catch (RuntimeException | Error e) {
      queue.close();
      throw e;
    }
  }

  /** @return the file of {@code cycle} (whether or not it exists) */
  File fileOf(int cycle) {
    return cycleFiles.resourceFor(cycle).path;
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
