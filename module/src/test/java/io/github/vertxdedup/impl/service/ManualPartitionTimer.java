package io.github.vertxdedup.impl.service;

import static org.assertj.core.api.Assertions.fail;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.time.DedupClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Timers of a partition that fire only when the test says so, on the context that set them (the partition's), so a
 * test drives the recovery's backoff and the tick without waiting for real time. Public for the tests of other
 * packages: {@link #deploy} deploys a partition on these timers, {@link #tick} fires its tick.
 */
public final class ManualPartitionTimer implements PartitionTimer {

  /** A timer the partition set. */
  record Scheduled(long id, long delayMs, Runnable task, Context context) {}

  private final AtomicLong ids = new AtomicLong();
  private final BlockingQueue<Scheduled> once = new LinkedBlockingQueue<>();
  private final Set<Long> cancelled = ConcurrentHashMap.newKeySet();
  /** The periods of the periodic timers set, in order. */
  final List<Long> periods = new CopyOnWriteArrayList<>();
  /** The periodic timers set, in order. */
  final List<Scheduled> periodic = new CopyOnWriteArrayList<>();

  @Override
  public long schedule(long delayMs, Runnable task) {
    Scheduled s = new Scheduled(ids.incrementAndGet(), delayMs, task, Vertx.currentContext());
    once.add(s);
    return s.id();
  }

  @Override
  public long periodic(long periodMs, Runnable task) {
    Scheduled s = new Scheduled(ids.incrementAndGet(), periodMs, task, Vertx.currentContext());
    periods.add(periodMs);
    periodic.add(s);
    return s.id();
  }

  @Override
  public void cancel(long id) {
    cancelled.add(id);
  }

  /**
   * Deploys partition 0 as {@link LocalPartition#deploy} does, without meters, its tick and recovery backoff on these
   * timers.
   *
   * @param vertx the Vert.x instance to deploy on
   * @param options validated options
   * @param clock the clock of the window and the leases
   * @param journal the partition's journal
   * @return completes with the partition as {@link LocalPartition#deploy}'s future does
   */
  public Future<LocalPartition> deploy(Vertx vertx, DedupOptions options, DedupClock clock, PartitionJournal journal) {
    return PartitionRequests.deploy(vertx, new PartitionVerticle(options, 0, clock, journal, null, this));
  }

  /**
   * Fires the partition's periodic tick once ({@link PartitionVerticle#TICK_MS}: lease sweep, journal retention,
   * metrics), on its context, as the end of a period would. Returns at once; the tick runs on the partition's context.
   *
   * @throws AssertionError if no periodic timer was set (a partition sets its tick once it is ready)
   */
  public void tick() {
    if (periodic.isEmpty()) {
      fail("the partition set no periodic timer");
    }
    periodic.forEach(this::fire);
  }

  /**
   * @param s a timer the partition set
   * @return true if the partition cancelled it
   */
  boolean isCancelled(Scheduled s) {
    return cancelled.contains(s.id());
  }

  /** @return one-shot timers set and not fired yet */
  int waiting() {
    return once.size();
  }

  /**
   * Waits (up to 10 s, for the partition to get there) until the partition sets its next one-shot timer.
   *
   * @return the timer, not fired
   */
  Scheduled next() {
    Scheduled s;
    try {
      s = once.poll(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    if (s == null) {
      return fail("the partition set no timer within 10 s");
    }
    return s;
  }

  /** Fires a timer on the context that set it (unless it was cancelled). */
  void fire(Scheduled s) {
    s.context().runOnContext(v -> {
      if (!cancelled.contains(s.id())) {
        s.task().run();
      }
    });
  }

  /**
   * Fires the next one-shot timer the partition sets ({@link #next}, {@link #fire}).
   *
   * @return the timer's delay, ms
   */
  long fireNext() {
    Scheduled s = next();
    fire(s);
    return s.delayMs();
  }
}
