package io.github.vertxdedup.window;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.Tuple.Tuple2;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Differential test of {@link DedupWindow} against {@link WindowModel}: random windows (bucket counts from 1 to
 * {@link DedupWindow#MAX_BUCKETS}, with and without payload hashes and capacity caps) driven by random operations
 * (accept, duplicate, reordered duplicates, payload change, explicit remember-until, restore, lookup, contains,
 * held, stats, upkeep with every budget, short and long idles, clock jumps forwards and backwards; for half the
 * windows, doublings built by a growth executor whose tasks run at random points between those). Every answer
 * must agree; 0 mismatches.
 *
 * <p>Size: two properties of {@value #TRIES} tries each share {@code dedup.property.operations} generated operations
 * (default 10^6; the parent pom's {@code long} profile sets 10^7). Small id spaces make duplicates, re-accepts
 * after expiry, dead-slot reuse and sweeps frequent; large ones make the table grow. After both have run, a check
 * asserts the total and that every path (each verdict, each error, expiry, eviction, growth, sweeps, backward
 * shifts, dead-slot reuse) was taken.
 */
class DedupWindowPropertyTest {

  /** Tries of each of the two properties. */
  private static final int TRIES = 100;
  private static final long OPERATIONS = Long.getLong("dedup.property.operations", 1_000_000L);
  private static final int OPS_PER_TRY = (int) Math.max(1_000, (OPERATIONS + 2 * TRIES - 1) / (2 * TRIES));

  /** Calls compared, over all tries (a generated operation makes one call or a few). */
  private static final AtomicLong COMPARED = new AtomicLong();
  private static final AtomicLong GENERATED = new AtomicLong();
  private static final AtomicLong TRIES_RUN = new AtomicLong();
  /** What the tries exercised, summed: see {@link #shouldHaveExercisedEveryPath()}. */
  private static final AtomicLongArray SEEN = new AtomicLongArray(Seen.values().length);

  enum Seen {
    ACCEPTED, DUPLICATE, CONFLICT, REFUSED_FULL, BAD_ARGUMENT, RESTORED, EXPIRED, EVICTED, GREW, SWEPT, SHIFTED,
    UPKEEP, GREW_BESIDE
  }

  enum Kind {
    ACCEPT, DUPLICATE, REORDER, PAYLOAD_CHANGE, REMEMBER_UNTIL, RESTORE, LOOKUP, CONTAINS, HELD, STATS,
    MEMORY_START, TICK, ADVANCE, IDLE, JUMP, ZERO_FINGERPRINT, UPKEEP, GROWTH
  }

  /** One operation; its numbers are read relative to the window and the clock when it runs. */
  record Op(Kind kind, int id, long a, long b) {}

  enum FingerprintStyle { SEQUENTIAL, RANDOM, CLUSTERED }

  /**
   * The window's shape and the pace of time: in a calm scenario the long moves of the clock (advance by up to W,
   * idle, jump) are short ticks too, so that ids pile up and the table grows.
   */
  record Shape(int buckets, long bucketMs, boolean calm) {}

  /** A window and an id space; {@code maxIds} 0 stands for the default cap. */
  record Config(Shape shape, boolean payloadHashes, long maxIds, CapacityPolicy policy, int idSpace,
      FingerprintStyle style, long seed) {

    /** Half the windows have their doublings built by a growth executor (queued until a GROWTH operation). */
    boolean growBeside() {
      return ((seed >>> 11) & 1) == 1;
    }

    /** Negative and epoch-like clock times as well as 0. */
    long startMs() {
      return new long[] {0L, -7_777L, 1_700_000_000_123L}[(int) Math.floorMod(seed, 3L)];
    }

    long[] fingerprints() {
      SplittableRandom random = new SplittableRandom(seed);
      long[] fingerprints = new long[idSpace];
      for (int i = 0; i < idSpace; i++) {
        long f = switch (style) {
          case SEQUENTIAL -> i + 1;
          case RANDOM -> random.nextLong();
          // The same few home slots in every table size: long probe chains, wrapping around the array end.
          case CLUSTERED -> ((((long) (i % 4) - 1) << 61) | (i * 2L + 1)) * FIBONACCI_INVERSE;
        };
        fingerprints[i] = f == 0 ? 1 : f;
      }
      return fingerprints;
    }
  }

  record Scenario(Config config, List<Op> ops) {}

  private static final long FIBONACCI_INVERSE;

  static {
    long x = FingerprintTable.FIBONACCI;
    for (int i = 0; i < 5; i++) {
      x *= 2 - FingerprintTable.FIBONACCI * x;
    }
    FIBONACCI_INVERSE = x;
  }

  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void shouldAgreeWithTheReferenceModel(@ForAll("scenarios") Scenario scenario) {
    run(scenario);
  }

  /** Calm time, long windows and large id spaces: the table grows, sweeps and reuses slots at many sizes. */
  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  void shouldAgreeWithTheReferenceModelWhileTheTableGrows(@ForAll("crowdedScenarios") Scenario scenario) {
    run(scenario);
  }

  private static void run(Scenario scenario) {
    Config c = scenario.config();
    long b = c.shape().bucketMs();
    long windowMs = c.shape().buckets() * b;
    WindowDifferential d = new WindowDifferential(windowMs, b, c.maxIds(), c.policy(), c.payloadHashes(),
        c.startMs(), c.growBeside());
    long[] ids = c.fingerprints();
    long[] recent = new long[64];
    int recentCount = 0;
    long maxSlots = 0;
    int step = 0;
    for (Op op : scenario.ops()) {
      Kind kind = op.kind();
      if (c.shape().calm() && (kind == Kind.ADVANCE || kind == Kind.IDLE || kind == Kind.JUMP)) {
        kind = Kind.TICK;
      }
      long id = ids[op.id() % ids.length];
      long older = recentCount == 0 ? id : recent[(int) ((recentCount - 1 - op.a() % Math.min(recentCount, 64)) & 63)];
      switch (kind) {
        case ACCEPT -> count(d.check(id, payload(op.b()), DedupWindow.DEFAULT_REMEMBER_UNTIL));
        case DUPLICATE -> count(d.check(older, payload(op.b()), DedupWindow.DEFAULT_REMEMBER_UNTIL));
        case REORDER -> { // a few recent ids again, newest first
          for (int k = 0; k < Math.min(recentCount, 1 + op.b() % 5); k++) {
            count(d.check(recent[(recentCount - 1 - k) & 63]));
          }
        }
        case PAYLOAD_CHANGE -> count(d.check(older, 1 + op.b() % 3, DedupWindow.DEFAULT_REMEMBER_UNTIL));
        case REMEMBER_UNTIL -> count(d.check(id, payload(op.b()), d.nowMs() + rememberFor(op.a(), windowMs, b)));
        case RESTORE -> {
          long firstSeenMs = d.nowMs() - op.a() % (2 * windowMs + 1);
          long expiresAtMs = firstSeenMs + op.b() % (2 * windowMs + 2) - 1;
          WindowModel.Outcome o = d.restore(id, payload(op.a() ^ op.b()), firstSeenMs, expiresAtMs);
          count(o);
          if (Boolean.TRUE.equals(o.result())) {
            SEEN.incrementAndGet(Seen.RESTORED.ordinal());
          }
        }
        case LOOKUP -> d.lookup(op.a() % 2 == 0 ? id : older);
        case CONTAINS -> d.contains(op.a() % 2 == 0 ? id : older);
        case HELD -> d.held();
        case STATS -> d.stats();
        case MEMORY_START -> d.memoryStart();
        case TICK -> d.advance(op.a() % (2 * b + 1));
        case ADVANCE -> d.advance(op.a() % (windowMs + 1));
        case IDLE -> d.advance(windowMs + op.a() % (3 * windowMs));
        case JUMP -> {
          if (op.b() % 3 == 0) {
            d.setReading(d.readingMs() - op.a() % (2 * windowMs + 1)); // backwards
          } else {
            d.advance(op.a() % ((1L << 20) * b)); // far forwards: up to 2^20 buckets, past any epoch period
          }
        }
        case ZERO_FINGERPRINT -> count(d.check(0, 0, DedupWindow.DEFAULT_REMEMBER_UNTIL));
        case UPKEEP -> { // all the work owed, a few slots, none, or a refused negative budget
          long slots = switch ((int) (op.a() % 8)) {
            case 0 -> Long.MAX_VALUE;
            case 1 -> 0;
            case 2 -> -1 - op.b() % 3;
            default -> op.b() % (4L * d.window.stats().tableSlots());
          };
          d.upkeep(slots);
          SEEN.incrementAndGet(Seen.UPKEEP.ordinal());
        }
        case GROWTH -> d.runGrowth();
      }
      if (kind == Kind.ACCEPT || kind == Kind.REMEMBER_UNTIL) {
        recent[recentCount++ & 63] = id;
      }
      if (++step % 512 == 0) {
        maxSlots = Math.max(maxSlots, d.window.stats().tableSlots());
        d.verifyAll();
      }
    }
    d.verifyAll();
    WindowStats stats = d.window.stats();
    SEEN.addAndGet(Seen.EXPIRED.ordinal(), stats.expired());
    SEEN.addAndGet(Seen.EVICTED.ordinal(), stats.earlyEvictions());
    if (Math.max(maxSlots, stats.tableSlots()) > FingerprintTable.MIN_CAPACITY) {
      SEEN.incrementAndGet(Seen.GREW.ordinal());
    }
    FingerprintTable table = d.window.table();
    SEEN.addAndGet(Seen.SWEPT.ordinal(), table.deletedEntries);
    SEEN.addAndGet(Seen.SHIFTED.ordinal(), table.shiftedEntries);
    SEEN.addAndGet(Seen.GREW_BESIDE.ordinal(), d.window.doublingsBeside);
    COMPARED.addAndGet(d.operations);
    TRIES_RUN.incrementAndGet();
    GENERATED.addAndGet(scenario.ops().size());
  }

  /** A remember-until offset from now: mostly valid, sometimes on or past a limit (then an error is expected). */
  private static long rememberFor(long a, long windowMs, long b) {
    return switch ((int) (a % 9)) {
      case 0 -> 1;
      case 1 -> Math.max(1, b - 1);
      case 2 -> b;
      case 3 -> windowMs;
      case 4 -> windowMs + 1; // beyond the window: error
      case 5 -> 0; // now: already past, error
      case 6 -> -b; // past: error
      default -> 1 + (a / 9) % windowMs;
    };
  }

  /** No payload hash a third of the time, else one of three. */
  private static long payload(long x) {
    return x % 3 == 0 ? DedupWindow.NO_PAYLOAD_HASH : 1 + x % 3;
  }

  private static void count(WindowModel.Outcome outcome) {
    Seen seen;
    if (outcome.thrown() == WindowFullException.class) {
      seen = Seen.REFUSED_FULL;
    } else if (outcome.thrown() == IllegalArgumentException.class) {
      seen = Seen.BAD_ARGUMENT;
    } else if (outcome.result() instanceof WindowVerdict v) {
      seen = Seen.valueOf(v.name());
    } else {
      return;
    }
    SEEN.incrementAndGet(seen.ordinal());
  }

  @Provide
  Arbitrary<Scenario> crowdedScenarios() {
    Arbitrary<Shape> shapes = Combinators.combine(
        Arbitraries.of(60, 1_000, DedupWindow.MAX_BUCKETS),
        Arbitraries.of(1L, 1_000L),
        Arbitraries.just(true)).as(Shape::new);
    Arbitrary<Config> configs = Combinators.combine(
        shapes,
        Arbitraries.of(false, true),
        Arbitraries.frequency(weighted(3, 0L), weighted(1, 300L), weighted(1, 2_000L)),
        Arbitraries.of(CapacityPolicy.class),
        Arbitraries.of(500, 5_000, 50_000),
        Arbitraries.frequency(weighted(2, FingerprintStyle.RANDOM), weighted(2, FingerprintStyle.SEQUENTIAL),
            weighted(1, FingerprintStyle.CLUSTERED)),
        Arbitraries.longs()).as(Config::new);
    return Combinators.combine(configs, ops().list().ofSize(OPS_PER_TRY)).as(Scenario::new);
  }

  @Provide
  Arbitrary<Scenario> scenarios() {
    Arbitrary<Shape> shapes = Combinators.combine(
        Arbitraries.of(1, 2, 3, 5, 8, 60, 1_000, DedupWindow.MAX_BUCKETS),
        Arbitraries.of(1L, 3L, 1_000L),
        Arbitraries.frequency(weighted(1, false), weighted(2, true))).as(Shape::new);
    Arbitrary<Config> configs = Combinators.combine(
        shapes,
        Arbitraries.of(false, true),
        Arbitraries.frequency(weighted(6, 0L), weighted(1, 1L), weighted(1, 2L), weighted(1, 5L),
            weighted(1, 40L), weighted(1, 700L)),
        Arbitraries.of(CapacityPolicy.class),
        Arbitraries.frequency(weighted(1, 1), weighted(1, 2), weighted(1, 3), weighted(1, 8), weighted(1, 30),
            weighted(2, 200), weighted(3, 3_000)),
        Arbitraries.of(FingerprintStyle.class),
        Arbitraries.longs()).as(Config::new);
    return Combinators.combine(configs, ops().list().ofSize(OPS_PER_TRY)).as(Scenario::new);
  }

  private static Arbitrary<Op> ops() {
    Arbitrary<Kind> kinds = Arbitraries.frequency(
        weighted(22, Kind.ACCEPT), weighted(10, Kind.DUPLICATE), weighted(3, Kind.REORDER), weighted(5, Kind.PAYLOAD_CHANGE),
        weighted(8, Kind.REMEMBER_UNTIL), weighted(3, Kind.RESTORE), weighted(6, Kind.LOOKUP), weighted(6, Kind.CONTAINS),
        weighted(2, Kind.HELD), weighted(1, Kind.STATS), weighted(1, Kind.MEMORY_START), weighted(20, Kind.TICK),
        weighted(5, Kind.ADVANCE), weighted(1, Kind.IDLE), weighted(1, Kind.JUMP), weighted(1, Kind.ZERO_FINGERPRINT),
        weighted(4, Kind.UPKEEP), weighted(2, Kind.GROWTH));
    Arbitrary<Long> numbers =
        Arbitraries.longs().between(0, Long.MAX_VALUE).withDistribution(RandomDistribution.uniform());
    return Combinators.combine(kinds, Arbitraries.integers().between(0, 1 << 20), numbers, numbers).as(Op::new);
  }

  private static <T> Tuple2<Integer, T> weighted(int weight, T value) {
    return Tuple.of(weight, value);
  }

  @AfterContainer
  static void shouldHaveExercisedEveryPath() {
    StringBuilder report = new StringBuilder("window differential: ").append(TRIES_RUN.get()).append(" tries, ")
        .append(GENERATED.get())
        .append(" operations generated, ").append(COMPARED.get()).append(" answers compared");
    for (Seen s : Seen.values()) {
      report.append(", ").append(s).append('=').append(SEEN.get(s.ordinal()));
    }
    System.out.println(report);
    if (TRIES_RUN.get() < 2 * TRIES) {
      return; // not both properties ran in full (a single one was selected, or one failed and reported it)
    }
    assertThat(GENERATED.get()).isGreaterThanOrEqualTo(OPERATIONS);
    for (Seen s : Seen.values()) {
      assertThat(SEEN.get(s.ordinal())).as("count of %s", s).isPositive();
    }
  }
}
