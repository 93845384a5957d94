package io.github.vertxdedup.kafka.impl;

import io.github.vertxdedup.journal.JournalContents;
import io.github.vertxdedup.journal.JournalLockedException;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;

/*
 * Why a journal directory may go, and when.
 *
 * A partition's journal in <journalDir>/<group.id>/<topic>-<partition> is a cache of the partition's window on this
 * machine: when the partition is assigned here again, the window is rebuilt from it and what it lacks is read from
 * the source topic. Once nothing in it is remembered any more (every id's remember-until has passed, no claim is
 * open) it holds nothing a rebuild from the topic would not give: ids the topic carries are remembered until
 * min(timestamp + lookBackMs + W, now + W), which a rebuild computes itself, and ids the journal holds are live until
 * the remember-until it recorded, lookBackMs included for the ids it rebuilt. So lookBackMs needs no margin of its own
 * here: "nothing live at now" is the whole test, judged by the recovery a restart runs
 * (JournalContents.deleteIfForgotten). What a deleted journal takes with it besides expired ids is its recorded
 * offset, which an owner only uses where Kafka has no committed offset for the group; for a partition that left this
 * machine it is stale anyway.
 *
 * Which directories: those of the group not assigned to this consumer and not held by this consumer's window store
 * (being acquired or released). A directory another journal holds (another consumer of this Vert.x instance, another
 * process) is locked: deleteIfForgotten takes the journal's own lock and keeps it until the directory is gone, so no
 * owner opens it meanwhile, and a locked one is left alone.
 *
 * When: on a timer, every roll cycle of the journal (JournalOptions.rollCycleFor(W): W / 4 rounded up to a supported
 * length, at least a minute), the cadence at which the journal's own retention frees cycle files. A directory goes
 * at most one period after its last entry expired. Not on rebalances: a partition that just left has a journal at
 * least as new as its last write, which then stays live for W, so a sweep at the revocation would find nothing to
 * delete; and the first sweep runs a period after subscribe, once the consumer has its first assignment, so it does
 * not delete the expired journal (and its recorded offset) of a partition about to be assigned here.
 *
 * Each sweep runs on a worker of its own (a shared executor of one thread per Vert.x instance, so sweeps never run
 * in parallel), never on an event loop or the poll thread; its time is the injected DedupClock's.
 */

/**
 * Removes the journal directories of partitions that left this machine once their journal remembers nothing any
 * more; see the comment at the top of the file for why and when. One per consumer with {@code dedup.journalDir}.
 * One INFO line per directory removed, counted in {@code dedup.kafka.journal.directories.removed{group}}.
 *
 * <p>Thread-safe: {@link #start}, {@link #stop} and {@link #sweep} from any thread; the sweeps run on a worker.
 */
final class JournalCleanup {

  /** The executor the sweeps of every consumer of one Vert.x instance share. */
  static final String EXECUTOR = "dedup-kafka-journal-cleanup";
  /** {@code <topic>-<partition>}: Kafka topic names are {@code [a-zA-Z0-9._-]}. */
  private static final Pattern PARTITION_DIR = Pattern.compile("([a-zA-Z0-9._-]+)-(\\d+)");

  private final Vertx vertx;
  private final Path groupDir;
  private final String groupId;
  private final long windowMs;
  private final long periodMs;
  private final DedupClock clock;
  private final Supplier<Set<TopicPartition>> assignedHere;
  private final Predicate<Path> heldHere;
  private final Counter removed;
  private final Logger log;
  private final WorkerExecutor worker;
  /** Per directory, an instant before which its journal surely remembers something: not looked into before. */
  private final Map<Path, Long> keptUntil = new ConcurrentHashMap<>();
  /** A timer's sweep is queued and has not started: another tick adds none. */
  private final AtomicBoolean queued = new AtomicBoolean();
  private long timer = -1;
  private boolean stopped;

  /**
   * @param vertx the Vert.x instance (the timer, the worker)
   * @param groupDir {@code <journalDir>/<group.id>}
   * @param groupId the consumer group
   * @param windowMs the window {@code W}, milliseconds: it chooses the journals' roll cycle and the timer's period
   * @param clock the clock of the windows (the instants the journals record)
   * @param assignedHere the partitions assigned to this consumer now
   * @param heldHere whether this consumer's window store holds (or is taking or giving back) a directory
   * @param registry where the counter of removed directories is registered
   * @param log the consumer's lifecycle logger
   */
  JournalCleanup(Vertx vertx, Path groupDir, String groupId, long windowMs, DedupClock clock,
      Supplier<Set<TopicPartition>> assignedHere, Predicate<Path> heldHere, MeterRegistry registry, Logger log) {
    this.vertx = vertx;
    this.groupDir = groupDir;
    this.groupId = groupId;
    this.windowMs = windowMs;
    this.periodMs = JournalOptions.rollCycleFor(Duration.ofMillis(windowMs)).toMillis();
    this.clock = clock;
    this.assignedHere = assignedHere;
    this.heldHere = heldHere;
    this.removed = Counter.builder("dedup.kafka.journal.directories.removed")
        .description("journal directories of partitions that left this machine, removed once they remembered nothing")
        .tag("group", groupId).register(registry);
    this.log = log;
    this.worker = vertx.createSharedWorkerExecutor(EXECUTOR, 1);
  }

  /** @return the timer's period, milliseconds: the journals' roll cycle */
  long periodMs() {
    return periodMs;
  }

  /** Starts the timer: the first sweep runs one period from now. */
  synchronized void start() {
    if (!stopped && timer < 0) {
      timer = vertx.setPeriodic(periodMs, id -> {
        if (queued.compareAndSet(false, true)) {
          worker.executeBlocking(() -> {
            queued.set(false);
            return sweepNow();
          }, true);
        }
      });
    }
  }

  /** Stops the timer and gives the worker back; a sweep under way finishes. Idempotent. */
  synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    worker.close();
  }

  /**
   * Runs one sweep now, on the worker.
   *
   * @return completes with the directories removed
   */
  Future<List<Path>> sweep() {
    return worker.executeBlocking(this::sweepNow, true);
  }

  /** Looks into every directory of the group not assigned or held here, and removes those that remember nothing. */
  private List<Path> sweepNow() {
    List<Path> gone = new ArrayList<>();
    if (!Files.isDirectory(groupDir)) {
      return gone;
    }
    List<Path> dirs;
    try (Stream<Path> s = Files.list(groupDir)) {
      dirs = s.filter(Files::isDirectory).toList();
    } catch (IOException | UncheckedIOException e) {
      log.warn("journal directories of group {} in {} cannot be listed for clean-up: {}", groupId, groupDir,
          e.toString());
      return gone;
    }
    Set<TopicPartition> assigned = assignedHere.get();
    long nowMs = clock.nowMs();
    for (Path dir : dirs) {
      Matcher m = PARTITION_DIR.matcher(dir.getFileName().toString());
      if (!m.matches()) {
        continue;
      }
      TopicPartition tp;
      try {
        tp = new TopicPartition(m.group(1), Integer.parseInt(m.group(2)));
      } catch (NumberFormatException e) {
        continue;
      }
      Long until = keptUntil.get(dir);
      if (assigned.contains(tp) || heldHere.test(dir) || (until != null && nowMs < until)) {
        continue;
      }
      try {
        JournalContents.Removal r = JournalContents.deleteIfForgotten(dir, windowMs, nowMs);
        if (r.deleted()) {
          keptUntil.remove(dir);
          removed.increment();
          gone.add(dir);
          log.info("{}: journal directory {} of group {} removed: the partition is not assigned here and its journal"
              + " remembers nothing any more", tp, dir, groupId);
        } else {
          keptUntil.put(dir, r.keptUntilMs());
        }
      } catch (JournalLockedException e) {
        // Held by a live journal (another consumer, another process): it is in use; looked at again next time.
        keptUntil.remove(dir);
      } catch (IllegalArgumentException e) {
        // Not a journal directory (no lock file, no cycle file), or not yet one (an owner is creating it): not ours
        // to remove now; looked at again next time, as the check costs one listing.
        keptUntil.remove(dir);
      } catch (RuntimeException e) {
        log.warn("{}: journal directory {} of group {} could not be cleaned up: {}", tp, dir, groupId, e.toString());
      }
    }
    return gone;
  }
}
