package io.github.vertxdedup.examples.tools;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.DedupVerdict;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * Measures the journal's disk use per accepted id the way a deployment writes it: through a journaled
 * {@code DedupVerticle} (one partition, {@code journalSync} ASYNC, a one-hour window so nothing expires), one
 * scenario per address, each with {@code N} new ids, then {@code du -sk} of each partition's journal directory after
 * the service is undeployed (journal closed). Chronicle's cycle files are sparse, so {@code du} (allocated blocks),
 * not the file length, is the figure.
 *
 * <p>Scenarios: {@code check} (one accept record per id, as single check requests write it), {@code check+key+hash}
 * (the same with a business key and a payload hash), {@code checkBatch} (batches of 500, as the record-first Kafka
 * consumer writes a poll), {@code claim+commit} (a claim record and a commit record per id, as the effect-first Kafka
 * consumer writes it, which claims in batches but journals each claim and commit on its own).
 *
 * <p>Run from the repository root (Linux or macOS: it calls {@code du}): {@code scripts/run-example disk-budget
 * 1000000 /tmp/disk-budget}. Arguments: ids per scenario (default 1,000,000), the directory to write in (default a new
 * temporary one; it must be empty or absent). It prints one line per scenario: KiB on disk, bytes per id, MB per
 * million ids.
 */
public final class JournalDiskBudget {

  private static final int IN_FLIGHT = 500;
  private static final int BATCH = 500;

  private JournalDiskBudget() {}

  /** Most ids per scenario. */
  static final int MAX_IDS = 100_000_000;

  /**
   * Parses {@code [ids [dir]]}, measures and exits: 0 done, 2 bad arguments (a message naming the argument and its
   * range), 1 a failure (stack trace).
   *
   * @param args {@code [ids [dir]]}; {@code --help} shows the usage
   */
  public static void main(String[] args) {
    @picocli.CommandLine.Command(name = "disk-budget", mixinStandardHelpOptions = true,
        description = "Journal bytes on disk per accepted id, written through the dedup service.")
    class Command implements java.util.concurrent.Callable<Integer> {
      @picocli.CommandLine.Spec
      picocli.CommandLine.Model.CommandSpec spec;

      @picocli.CommandLine.Parameters(index = "0", arity = "0..1", defaultValue = "1_000_000", paramLabel = "ids",
          description = "New ids per scenario, a multiple of " + BATCH + " from " + BATCH + " to 100_000_000"
              + " (underscores allowed; default: ${DEFAULT-VALUE}).")
      String ids;

      @picocli.CommandLine.Parameters(index = "1", arity = "0..1", paramLabel = "dir",
          description = "Directory to write in, empty or absent (default: a new temporary one).")
      Path dir;

      @Override
      public Integer call() throws Exception {
        long n;
        try {
          n = Long.parseLong(ids.replace("_", ""));
        } catch (NumberFormatException e) {
          n = -1;
        }
        if (n < BATCH || n > MAX_IDS || n % BATCH != 0) {
          throw new picocli.CommandLine.ParameterException(spec.commandLine(), "ids must be a multiple of " + BATCH
              + " from " + BATCH + " to " + MAX_IDS + " but was '" + ids + "'");
        }
        Path d = dir != null ? dir : Files.createTempDirectory("disk-budget");
        try {
          Files.createDirectories(d);
          try (var entries = Files.list(d)) {
            if (entries.findAny().isPresent()) {
              throw new picocli.CommandLine.ParameterException(spec.commandLine(), "dir must be empty or absent but "
                  + d + " has files");
            }
          }
        } catch (IOException e) {
          throw new picocli.CommandLine.ParameterException(spec.commandLine(), "dir " + d + " cannot be created or"
              + " read: " + e);
        }
        measureAll((int) n, d);
        return 0;
      }
    }
    System.exit(new picocli.CommandLine(new Command()).execute(args));
  }

  private static void measureAll(int ids, Path dir) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      System.out.printf("journal disk use per accepted id, %,d ids per scenario, in %s%n", ids, dir);
      measure(vertx, dir, "check", ids, c -> i -> expect(c.check(new DedupEvent("evt-" + i)), DedupVerdict.ACCEPTED));
      measure(vertx, dir, "check+key+hash", ids, c -> i -> expect(c.check(new DedupEvent("evt-" + i)
          .setKey("order-" + i).setPayloadHash(Integer.toHexString(i * 31 + 7))), DedupVerdict.ACCEPTED));
      measure(vertx, dir, "checkBatch", ids / BATCH, c -> b -> {
        List<DedupEvent> batch = new ArrayList<>(BATCH);
        for (int k = 0; k < BATCH; k++) {
          batch.add(new DedupEvent("evt-" + (b * BATCH + k)));
        }
        return c.checkBatch(batch).compose(results -> results.stream()
            .allMatch(r -> r.succeeded() && r.result().verdict() == DedupVerdict.ACCEPTED)
            ? Future.succeededFuture() : Future.failedFuture("a batch event was not ACCEPTED"));
      });
      measure(vertx, dir, "claim+commit", ids, c -> i -> {
        DedupEvent event = new DedupEvent("evt-" + i);
        return expect(c.claim(event), DedupVerdict.ACCEPTED)
            .compose(claim -> expect(c.commit(event.setClaimToken(claim.claimToken())), DedupVerdict.COMMITTED));
      });
    } finally {
      vertx.close().await();
    }
  }

  private static void measure(Vertx vertx, Path dir, String scenario, int operations,
      java.util.function.Function<DedupClient, IntFunction<Future<?>>> operation) throws Exception {
    String address = scenario.replace('+', '-');
    DedupOptions options = new DedupOptions().setAddress(address).setPartitions(1)
        .setWindow(Duration.ofHours(1)).setJournalDir(dir.toString())
        .setExpectedIdsPerPartition(operations * (scenario.equals("checkBatch") ? BATCH : 2));
    long start = System.nanoTime();
    String deployment = vertx.deployVerticle("io.github.vertxdedup.DedupVerticle",
        new DeploymentOptions().setConfig(options.toJson())).await();
    DedupClient client = DedupClient.create(vertx, options);
    drive(vertx.getOrCreateContext(), operations, operation.apply(client)).await();
    vertx.undeploy(deployment).await();
    double seconds = (System.nanoTime() - start) / 1e9;
    int ids = scenario.equals("checkBatch") ? operations * BATCH : operations;
    long bytes = Processes.duKib(dir.resolve(address).resolve("0")) * 1024;
    System.out.printf("%-15s %,10d KiB on disk  %6.1f bytes/id  %6.1f MB per million ids  (%.1f s)%n",
        scenario, bytes / 1024, (double) bytes / ids, bytes / 1e6 * 1_000_000 / ids, seconds);
  }

  /** Runs {@code n} operations with {@link #IN_FLIGHT} outstanding, on one event loop; fails on the first failure. */
  private static Future<Void> drive(Context context, int n, IntFunction<Future<?>> operation) {
    Promise<Void> done = Promise.promise();
    context.runOnContext(v -> {
      int[] next = {0};
      int[] completed = {0};
      Runnable[] send = new Runnable[1];
      send[0] = () -> {
        if (next[0] >= n) {
          return;
        }
        operation.apply(next[0]++).onComplete(ar -> {
          if (ar.failed()) {
            done.tryFail(ar.cause());
          } else if (++completed[0] == n) {
            done.tryComplete();
          } else {
            send[0].run();
          }
        });
      };
      for (int k = 0; k < Math.min(IN_FLIGHT, n); k++) {
        send[0].run();
      }
    });
    return done.future();
  }

  private static Future<DedupResult> expect(Future<DedupResult> result, DedupVerdict verdict) {
    return result.compose(r -> r.verdict() == verdict ? Future.succeededFuture(r)
        : Future.failedFuture("expected " + verdict + " but got " + r.verdict()));
  }
}
