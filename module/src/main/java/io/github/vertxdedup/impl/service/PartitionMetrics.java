package io.github.vertxdedup.impl.service;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * The Micrometer meters of one partition, tagged with its identity: {@code address}, {@code group}, {@code topic}
 * and {@code partition}. A partition of the service has its {@code address} and {@code partition} and an empty
 * {@code group} and {@code topic} ({@link #serviceTags}); the Kafka consumer's window of a topic-partition has the
 * consumer's dedup {@code address} and the {@code group}, {@code topic} and {@code partition} its
 * {@code dedup.kafka.*} meters carry ({@link LocalPartition.Meters#kafkaWindow}). Every window meter has the same four
 * keys because a Prometheus registry requires one set of tag keys per meter name: it silently leaves out the meters
 * of a name registered with another set, so an application with both would lose one side's. An empty tag is no
 * label to Prometheus.
 *
 * <p>The meters show whether the window keeps its promise (late copies, duplicate ages, early evictions). Counters
 * and gauges read a {@link Snapshot} that the partition publishes from its event loop (every second, on
 * {@code stats} and at stop), so the hot path only bumps plain fields and a metrics thread never touches the
 * single-threaded window; readings lag by at most a second. The duplicate-age histogram is recorded directly.
 *
 * <p>Meters: {@code dedup.verdicts{verdict=accepted|duplicate|conflict|in_flight|unknown}},
 * {@code dedup.uncovered.accepts}, {@code dedup.unvouched.accepts} (new ids accepted within the window after a takeover
 * without the previous owner's journal), {@code dedup.late.deliveries} (event time older than the window),
 * {@code dedup.expired.leases}, {@code dedup.early.evictions}, {@code dedup.rejected} (window full),
 * {@code dedup.held.ids}, {@code dedup.claims.held} (in flight now), {@code dedup.held.id.bytes} (table bytes per
 * held entry), {@code dedup.pending}, {@code dedup.ready} (1 or 0), {@code dedup.window} (the window {@code W},
 * seconds: what alert rules compare ages and coverage with), {@code dedup.duplicate.age} (a timer with a percentile
 * histogram up to the window; the first sighting is known to its bucket, so an age reads up to one bucket
 * width too old).
 *
 * <p>The identity is stable across restarts, so one window's series continue where its previous run's stopped. One
 * identity, one set of meters: a partition that registers meters under an identity another partition still holds (a
 * successor deployed before its predecessor has stopped, as when a journal changes hands) replaces that one's
 * meters, and a partition that closes removes only the meters still its own. Without that, the registry would hand
 * the successor the predecessor's meters, which read the predecessor's counters and vanish when it stops.
 *
 * <p>Thread-safe: {@link #publish} from the partition, reads from any thread.
 */
final class PartitionMetrics {

  /**
   * What the meters read, published by the partition.
   *
   * @param accepted accepted verdicts (claims included)
   * @param duplicates duplicate verdicts
   * @param conflicts conflict verdicts
   * @param inFlight in-flight verdicts
   * @param unknown unknown verdicts
   * @param uncovered accepts of events older than the partition's memory
   * @param unvouched accepts of new ids within the window after a takeover without the previous owner's journal
   * @param lateDeliveries events whose event time is older than now minus the window
   * @param expiredLeases claims whose lease ran out
   * @param earlyEvictions entries forgotten early under EVICT_OLDEST
   * @param rejected new entries refused because the window was full
   * @param held entries remembered now
   * @param claimsHeld live claims now
   * @param bytesPerHeldId table bytes per held entry
   * @param pending replies waiting for the journal
   * @param ready whether the partition answers
   */
  record Snapshot(long accepted, long duplicates, long conflicts, long inFlight, long unknown, long uncovered,
      long unvouched, long lateDeliveries, long expiredLeases, long earlyEvictions, long rejected, long held,
      long claimsHeld, double bytesPerHeldId, int pending, boolean ready) {

    static final Snapshot EMPTY = new Snapshot(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false);
  }

  private final MeterRegistry registry;
  private final Tags tags;
  private final List<Meter> meters = new ArrayList<>();
  private final Timer duplicateAge;
  private volatile Snapshot snapshot = Snapshot.EMPTY;

  /**
   * The identity of a partition of the event-bus service.
   *
   * @param address the service's address
   * @param partition the partition's number
   * @return {@code address} and {@code partition}, {@code group} and {@code topic} empty
   */
  static Tags serviceTags(String address, int partition) {
    return LocalPartition.Meters.windowTags(address, "", "", partition);
  }


  /**
   * Registers the partition's meters, replacing those of another partition with the same identity.
   *
   * @param registry the registry
   * @param tags the partition's identity, e.g. {@link #serviceTags}
   * @param windowMs the window, milliseconds: the duplicate-age histogram's upper end
   */
  PartitionMetrics(MeterRegistry registry, Tags tags, long windowMs) {
    this.registry = registry;
    this.tags = tags;
    verdict("accepted", Snapshot::accepted);
    verdict("duplicate", Snapshot::duplicates);
    verdict("conflict", Snapshot::conflicts);
    verdict("in_flight", Snapshot::inFlight);
    verdict("unknown", Snapshot::unknown);
    counter("dedup.uncovered.accepts", "events accepted although older than what the partition covers",
        Snapshot::uncovered);
    counter("dedup.unvouched.accepts", "new ids accepted within the window after a takeover without the previous"
        + " owner's journal", Snapshot::unvouched);
    counter("dedup.late.deliveries", "events whose eventTimeMs is older than now minus the window",
        Snapshot::lateDeliveries);
    counter("dedup.expired.leases", "claims forgotten because their lease ran out", Snapshot::expiredLeases);
    counter("dedup.early.evictions", "entries forgotten before their expiry under EVICT_OLDEST",
        Snapshot::earlyEvictions);
    counter("dedup.rejected", "new entries refused because the window was full", Snapshot::rejected);
    gauge("dedup.held.ids", "ids and keys remembered now", null, s -> s.held());
    gauge("dedup.claims.held", "claims in flight now", null, s -> s.claimsHeld());
    gauge("dedup.held.id.bytes", "estimated table bytes per held id", "bytes", Snapshot::bytesPerHeldId);
    gauge("dedup.pending", "replies waiting for their journal write", null, s -> s.pending());
    gauge("dedup.ready", "1 when the partition answers, else 0", null, s -> s.ready() ? 1 : 0);
    double windowSeconds = windowMs / 1000.0;
    gauge("dedup.window", "the window W: how long an id is remembered at least", "seconds", s -> windowSeconds);
    replace("dedup.duplicate.age", tags);
    duplicateAge = Timer.builder("dedup.duplicate.age")
        .description("time since the first sighting, for each duplicate; bucket precision, up to one bucket width over")
        .tags(tags)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofMillis(Math.max(2, windowMs)))
        .register(registry);
    meters.add(duplicateAge);
  }

  void publish(Snapshot s) {
    snapshot = s;
  }

  void recordDuplicateAge(long ageMs) {
    duplicateAge.record(Math.max(0, ageMs), TimeUnit.MILLISECONDS);
  }

  /** Removes this partition's meters from the registry, but not those a successor registered since. */
  void close() {
    for (Meter m : meters) {
      Meter.Id id = m.getId();
      for (Meter registered : registry.find(id.getName()).tags(id.getTagsAsIterable()).meters()) {
        if (registered == m) {
          registry.remove(m);
        }
      }
    }
    meters.clear();
  }

  /**
   * Removes the meters of another partition registered under {@code name} and this identity (and any further tag),
   * so that the registry registers this partition's own instead of returning those.
   */
  private void replace(String name, Iterable<Tag> identity) {
    for (Meter m : registry.find(name).tags(identity).meters()) {
      registry.remove(m);
    }
  }

  private void verdict(String verdict, ToDoubleFunction<Snapshot> f) {
    replace("dedup.verdicts", tags.and("verdict", verdict));
    meters.add(FunctionCounter.builder("dedup.verdicts", this, m -> f.applyAsDouble(m.snapshot))
        .description("verdicts given").tags(tags).tag("verdict", verdict).register(registry));
  }

  private void counter(String name, String description, ToDoubleFunction<Snapshot> f) {
    replace(name, tags);
    meters.add(FunctionCounter.builder(name, this, m -> f.applyAsDouble(m.snapshot))
        .description(description).tags(tags).register(registry));
  }

  private void gauge(String name, String description, String unit, ToDoubleFunction<Snapshot> f) {
    replace(name, tags);
    meters.add(Gauge.builder(name, this, m -> f.applyAsDouble(m.snapshot))
        .description(description).baseUnit(unit).tags(tags).strongReference(true).register(registry));
  }
}
