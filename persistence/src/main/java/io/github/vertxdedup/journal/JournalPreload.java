package io.github.vertxdedup.journal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads and initialises, on a daemon thread of its own, the Chronicle Queue classes the first {@link Journal#open}
 * of a JVM needs, so that a caller who knows a journal will be opened soon can have that work done while it waits for
 * something else.
 *
 * <p>The first open of a journal in a JVM spends almost all its time in Chronicle's static initialisation, not in the
 * journal: {@code net.openhft.chronicle.core.Jvm} (which binds POSIX calls through jnr-ffi, generating their stubs,
 * and loads JNA for CPU affinity), the wire layer's class aliases ({@code Wires}) and the queue builder. That is
 * several hundred classes, most of a cold open's time (docs/operations.md, "Recovery time"); the Kafka consumer
 * starts it when it subscribes, so that it runs beside the Kafka client's own start and the group join instead of after the
 * partitions are assigned.
 *
 * <p>Two threads that initialise classes whose static initialisers depend on each other can deadlock in the JVM's
 * class initialisation locks, and Chronicle's initialisers are tangled. So a caller that starts the preload must let
 * it finish ({@link #start}'s stage) before it opens a journal on another thread; the preload touches nothing else.
 *
 * <p>Set the system property {@value #DISABLE_PROPERTY} to {@code true} to turn it off: {@link #start} then completes
 * at once and the classes load on the first open, as without it.
 *
 * <p>Thread-safe: {@link #start} may be called from any thread, any number of times; the work runs once per class
 * loader.
 */
public final class JournalPreload {

  /** The system property that turns the preload off when {@code true}. */
  public static final String DISABLE_PROPERTY = "io.github.vertxdedup.journal.preload.disable";

  private static final Logger LOG = LoggerFactory.getLogger(JournalPreload.class);

  /**
   * The classes initialised, in this order: each is the root of one costly part of Chronicle's start (the JVM and OS
   * layer with its native bindings, the wire layer, the queue). A name that does not resolve is skipped: the open
   * then loads what it needs itself.
   */
  static final List<String> ROOTS = List.of(
      "net.openhft.chronicle.core.Jvm",
      "net.openhft.chronicle.core.OS",
      "net.openhft.chronicle.wire.Wires",
      "net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder",
      "net.openhft.chronicle.queue.impl.single.SingleChronicleQueue");

  private static final AtomicReference<CompletableFuture<Void>> STARTED = new AtomicReference<>();

  private JournalPreload() {}

  /**
   * Starts the preload if no call did before, on a daemon thread named {@code journal-preload}.
   *
   * @return a stage that completes (normally, always) when the preload has finished, or at once when it is turned off
   *     ({@value #DISABLE_PROPERTY}); a class that failed to load or initialise is logged at DEBUG and left to the
   *     journal's open, which reports it
   */
  public static CompletionStage<Void> start() {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> earlier = STARTED.compareAndExchange(null, mine);
    if (earlier != null) {
      return earlier;
    }
    if (Boolean.getBoolean(DISABLE_PROPERTY)) {
      mine.complete(null);
      return mine;
    }
    Thread t = new Thread(() -> {
      try {
        load(JournalPreload.class.getClassLoader());
      } finally {
        mine.complete(null);
      }
    }, "journal-preload");
    t.setDaemon(true);
    t.start();
    return mine;
  }

  /**
   * Initialises {@link #ROOTS} with {@code loader}, in order, on the calling thread.
   *
   * @param loader the class loader
   * @return how many of them were initialised
   */
  static int load(ClassLoader loader) {
    long startNs = System.nanoTime();
    int loaded = 0;
    for (String name : ROOTS) {
      try {
        Class.forName(name, true, loader);
        loaded++;
      } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
        LOG.debug("journal preload: {} did not load ({}); the first open loads what it needs", name, e.toString());
      }
    }
    LOG.debug("journal preload: {} of {} Chronicle roots initialised in {} ms", loaded, ROOTS.size(),
        (System.nanoTime() - startNs) / 1_000_000);
    return loaded;
  }
}
