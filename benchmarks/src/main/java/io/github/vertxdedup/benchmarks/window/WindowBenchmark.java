package io.github.vertxdedup.benchmarks.window;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/*
 * The dedup window side by side with the structures a team would otherwise reach for, on the reference workload
 * (Workload.SEED): 10 M events at 100 k events/s of simulated time, W = 60 s,
 * b = 1 s, 10 % redeliveries of ids accepted in the last 5 s, about 5.4 M ids held at peak.
 *
 * One invocation feeds the whole pre-generated stream to a fresh, empty structure (created, after a full GC, in
 * the iteration's setup, so neither the stream's generation nor the previous structure's garbage is measured), so
 * the score is the mean cost per event over a whole run: lookups, inserts, expiry, table growth and the GC work the
 * structure causes. SingleShotTime with @OperationsPerInvocation reports it in ns per event. Each fork runs one
 * contender, so the call into it is monomorphic, as it is in production.
 *
 * After every iteration the verdict counts are checked against the stream's expected ones: a structure that
 * answers wrongly fails the run instead of posting a flattering time.
 *
 * Run: java -jar benchmarks/target/benchmarks.jar WindowBenchmark -rf json -rff window-benchmark.json
 * (see docs/benchmarks.md and benchmarks/run-window-benchmark.sh, which also measures memory and draws the plot).
 */

/**
 * JMH benchmark: cost per event of {@link Contender each dedup structure} over the reference workload's 10 M events.
 *
 * <p>Score: nanoseconds per event (lower is better), one sample per 10 M-event run. Not thread-safe; JMH runs it on
 * one thread.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@OperationsPerInvocation(WindowBenchmark.EVENTS)
@Fork(value = 2, jvmArgsAppend = {"-Xmx8g", "-XX:+UseParallelGC"})
@Warmup(iterations = 2, batchSize = 1)
@Measurement(iterations = 3, batchSize = 1)
public class WindowBenchmark {

  /** Events per invocation: the reference workload's 10 M. */
  static final int EVENTS = 10_000_000;

  /** Which structure this fork measures; the keys of {@link Contender}. */
  @Param({"dedupWindow", "dedupWindowPresized", "dedupWindowBatch", "directDesign", "jdkPort", "caffeine"})
  public String contender;

  private EventStream stream;
  private SimulatedClock clock;
  private DedupContender structure;
  private long accepted;

  /** Generates the event stream once per fork. */
  @Setup(Level.Trial)
  public void generateStream() {
    if (Workload.SEED.events() != EVENTS) {
      throw new IllegalStateException("EVENTS (" + EVENTS + ") must equal the seed workload's events ("
          + Workload.SEED.events() + ")");
    }
    stream = EventStream.generate(Workload.SEED);
  }

  /** Drops the previous structure, collects it, and creates a fresh, empty one at the stream's start time. */
  @Setup(Level.Iteration)
  public void freshStructure() {
    structure = null;
    System.gc();
    clock = new SimulatedClock(EventStream.START_MS);
    structure = Contender.ofKey(contender).create(stream.workload(), clock);
  }

  /**
   * Feeds the whole stream to the structure.
   *
   * @return the number of accepted events (consumed by JMH, and checked after the iteration)
   */
  @Benchmark
  public long run() {
    accepted = Contender.run(stream, structure, clock);
    return accepted;
  }

  /**
   * Fails the run if the structure's verdicts differ from the stream's expected ones.
   *
   * @throws IllegalStateException on a mismatch
   */
  @TearDown(Level.Iteration)
  public void checkVerdicts() {
    if (accepted != stream.expectedAccepted()) {
      throw new IllegalStateException(contender + " accepted " + accepted + " events but must accept "
          + stream.expectedAccepted());
    }
  }

  /**
   * Runs the side-by-side with the annotations' settings and writes JMH's JSON results.
   *
   * @param args optional: the JSON result file (default {@code window-benchmark.json})
   * @throws RunnerException if JMH fails
   */
  public static void main(String[] args) throws RunnerException {
    String out = args.length > 0 ? args[0] : "window-benchmark.json";
    Options options = new OptionsBuilder()
        .include(WindowBenchmark.class.getName() + "\\.")
        .resultFormat(ResultFormatType.JSON)
        .result(out)
        .build();
    new Runner(options).run();
  }
}
