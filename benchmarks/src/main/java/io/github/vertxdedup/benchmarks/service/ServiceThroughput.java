package io.github.vertxdedup.benchmarks.service;

import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.commons.io.FileUtils;


/**
 * Decisions per second through the event bus, one partition, a fixed number of requests in flight, beside a trivial
 * echo verticle measured in the same run as the baseline. A load harness rather than a JMH benchmark: the quantity is
 * a steady-state rate of an asynchronous pipeline, which a closed loop of in-flight requests measures directly.
 *
 * <p>Scenarios: {@code echo-json}, {@code echo-local} (round trips of a trivial consumer), {@code check-json},
 * {@code check-local} (single {@code check} requests through {@link DedupClient}), {@code batch-local},
 * {@code batch-json} ({@code checkBatch} of {@code bench.batch} events). A scenario name followed by {@code +NONE},
 * {@code +ASYNC} or {@code +SYNC} (e.g. {@code check-local+ASYNC}) runs the service with a journal under that sync
 * policy, in a new directory under {@code bench.journalDir} (default: the temporary directory), deleted afterwards.
 * Ids are new except every tenth, which repeats one seen 10,000 requests earlier (a duplicate inside the window).
 *
 * <p>System properties: {@code bench.warmupSec} (5), {@code bench.measureSec} (10), {@code bench.rounds} (2),
 * {@code bench.inflight} (1000), {@code bench.batch} (1000), {@code bench.windowMs} (5000),
 * {@code bench.scenarios} (all, comma-separated), {@code bench.results} (a JSON results file for
 * {@link ServiceReport}; none by default). Prints one line per scenario and round. Uses real time: it is a
 * benchmark, not a test.
 */
public final class ServiceThroughput {

  private static final int WARMUP_SEC = Integer.getInteger("bench.warmupSec", 5);
  private static final int MEASURE_SEC = Integer.getInteger("bench.measureSec", 10);
  private static final int ROUNDS = Integer.getInteger("bench.rounds", 2);
  private static final int IN_FLIGHT = Integer.getInteger("bench.inflight", 1000);
  private static final int BATCH = Integer.getInteger("bench.batch", 1000);
  private static final long WINDOW_MS = Long.getLong("bench.windowMs", 5000L);
  private static final String JOURNAL_DIR = System.getProperty("bench.journalDir",
      System.getProperty("java.io.tmpdir"));
  private static final String SCENARIOS =
      System.getProperty("bench.scenarios", "echo-json,echo-local,check-json,check-local,batch-json,batch-local");

  private ServiceThroughput() {}

  /**
   * Runs the scenarios and prints their rates.
   *
   * @param args none
   * @throws Exception if a deployment fails
   */
  public static void main(String[] args) throws Exception {
    System.out.printf(Locale.ROOT, "in flight %d, batch %d, window %d ms, warmup %d s, measure %d s, %d cores%n",
        IN_FLIGHT, BATCH, WINDOW_MS, WARMUP_SEC, MEASURE_SEC, Runtime.getRuntime().availableProcessors());
    String date = Instant.now().toString();
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    List<ServiceResults.Round> rounds = new ArrayList<>();
    Vertx vertx = Vertx.vertx();
    vertx.eventBus().registerDefaultCodec(EchoBody.class, new EchoCodec());
    try {
      for (int round = 1; round <= ROUNDS; round++) {
        double load = os.getSystemLoadAverage();
        System.out.printf(Locale.ROOT, "round %d, load average %.2f%n", round, load);
        List<ServiceResults.Scenario> measured = new ArrayList<>();
        for (String scenario : SCENARIOS.split(",")) {
          measured.add(run(vertx, scenario.trim(), round));
        }
        rounds.add(new ServiceResults.Round(round, load, measured));
      }
    } finally {
      vertx.close().await();
    }
    System.out.printf(Locale.ROOT, "load average at the end: %.2f%n", os.getSystemLoadAverage());
    String results = System.getProperty("bench.results");
    if (results != null) {
      new ServiceResults(date, IN_FLIGHT, BATCH, WINDOW_MS, WARMUP_SEC, MEASURE_SEC,
          Runtime.getRuntime().availableProcessors(), rounds).write(java.nio.file.Path.of(results));
      System.out.println("wrote " + results);
    }
  }

  private static ServiceResults.Scenario run(Vertx vertx, String name, int round) throws Exception {
    int plus = name.indexOf('+');
    String scenario = plus < 0 ? name : name.substring(0, plus);
    java.nio.file.Path journal = plus < 0 ? null
        : java.nio.file.Files.createTempDirectory(java.nio.file.Path.of(JOURNAL_DIR), "bench-journal");
    String deployment;
    LoadDriver driver;
    if (scenario.startsWith("echo")) {
      deployment = vertx.deployVerticle(new EchoVerticle()).await();
      boolean local = scenario.equals("echo-local");
      DeliveryOptions header = new DeliveryOptions().addHeader("action", "check");
      driver = new LoadDriver(IN_FLIGHT, 1, n -> local
          ? vertx.eventBus().request("echo", new EchoBody(id(n)))
          : vertx.eventBus().request("echo", new JsonObject().put("id", id(n)), header));
    } else {
      DedupOptions options = new DedupOptions()
          .setAddress("bench")
          .setWindowMs(WINDOW_MS)
          .setBucketMs(WINDOW_MS / 100)
          .setPayloadHashes(false)
          .setMaxIdsPerPartition(100_000_000)
          .setMaxBatch(Math.max(BATCH, DedupOptions.DEFAULT_MAX_BATCH));
      if (journal != null) {
        options.setJournalDir(journal.toString())
            .setJournalSync(io.github.vertxdedup.journal.SyncPolicy.valueOf(name.substring(plus + 1)));
      }
      deployment = vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions().setConfig(options.toJson()))
          .await();
      DedupClient client = DedupClient.create(vertx, options,
          scenario.endsWith("local") ? DedupClient.Transport.LOCAL : DedupClient.Transport.JSON);
      if (scenario.startsWith("check")) {
        driver = new LoadDriver(IN_FLIGHT, 1, n -> client.check(new DedupEvent(id(n))));
      } else {
        driver = new LoadDriver(IN_FLIGHT, BATCH, n -> {
          List<DedupEvent> events = new ArrayList<>(BATCH);
          for (long i = n * BATCH, end = i + BATCH; i < end; i++) {
            events.add(new DedupEvent(id(i)));
          }
          return client.checkBatch(events).map(r -> checkSize(r));
        });
      }
    }
    double rate = LoadDriver.measure(vertx, driver, WARMUP_SEC, MEASURE_SEC);
    vertx.undeploy(deployment).await();
    System.out.printf(Locale.ROOT, "round %d  %-18s %,12.0f decisions/s   (errors %d)%n", round, name, rate,
        driver.errors);
    if (journal != null) {
      FileUtils.deleteQuietly(journal.toFile());
    }
    System.gc();
    return new ServiceResults.Scenario(name, rate, driver.errors);
  }

  private static List<DedupBatchResult> checkSize(List<DedupBatchResult> results) {
    if (results.size() != BATCH) {
      throw new IllegalStateException("expected " + BATCH + " verdicts but got " + results.size());
    }
    return results;
  }

  /** Every tenth id repeats the one 10,000 before it (a duplicate inside the window); the others are new. */
  private static String id(long n) {
    long k = n % 10 == 9 && n > 10_000 ? n - 10_000 : n;
    return "evt-" + k;
  }

  /** The baseline: replies with the request body. */
  private static final class EchoVerticle extends VerticleBase {
    @Override
    public Future<?> start() {
      return vertx.eventBus().consumer("echo", m -> m.reply(m.body())).completion();
    }
  }

  /** A small body for the local-codec echo. */
  private record EchoBody(String id) {}

  /** Passes {@link EchoBody} by reference. */
  private static final class EchoCodec implements MessageCodec<EchoBody, EchoBody> {
    @Override
    public void encodeToWire(Buffer buffer, EchoBody body) {
      throw new UnsupportedOperationException("local only");
    }

    @Override
    public EchoBody decodeFromWire(int pos, Buffer buffer) {
      throw new UnsupportedOperationException("local only");
    }

    @Override
    public EchoBody transform(EchoBody body) {
      return body;
    }

    @Override
    public String name() {
      return "bench-echo";
    }

    @Override
    public byte systemCodecID() {
      return -1;
    }
  }
}
