package io.github.vertxdedup.examples.demo;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.RecordIdentity;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The billing service of the demo, run by {@link BillingDemo} as a process of its own so that it can be killed with
 * SIGKILL: a {@link DedupKafkaConsumer} on {@code payment.succeeded} with a Chronicle journal per partition, whose
 * handler credits the ledger and sends a receipt.
 *
 * <h2>What it does with a record</h2>
 * The identity is the {@code message-id} header (the payment id); every delivery is noted in
 * {@code deliveries-<run>.log} ({@link DeliveryLog}). A record the window accepts reaches the handler, which (off the
 * event loop, in offset order per partition) first notes the call in {@code handled.log}
 * ({@code <paymentId> <run> <partition> <offset>}), then appends the credit to {@code ledger.log} and the receipt to
 * {@code receipts.log} (both {@link PaymentBook}s, keyed by payment id unless {@code --no-ledger-key}; both lines
 * {@code <paymentId> <account> <amountCents> <partition> <offset> <run>}). Noting the call before its effect makes
 * the count exact under SIGKILL: every ledger line has its call, and a call without its own ledger line was either
 * refused by the key or cut off by the kill ({@link DemoReport} tells which). A duplicate is dropped by the window:
 * the handler is not called.
 *
 * <h2>Kafka settings</h2>
 * Static membership ({@code group.instance.id}, the same in every run) and a 6 s session timeout (the broker's least):
 * a restarted consumer takes its partitions back at once instead of waiting for the dead member's session to time
 * out (45 s by default). {@code auto.offset.reset=earliest}: the demo's driver commits the group's start offsets
 * before the first run.
 *
 * <h2>Talking to the driver</h2>
 * Standard output, one line each: {@code started <epochMs>}; {@code subscribed <epochMs>}; {@code assigned <epochMs>}
 * (partitions assigned, their windows rebuilt from the journals); {@code first-answer <epochMs>} (the first record
 * done with: a duplicate dropped or an effect applied);
 * {@code status <deliveries> <handled> <dropped> <lapsedClaims> <inFlightWaits>} every {@value #STATUS_INTERVAL_MS} ms and once more after
 * the consumer closed (the final counts); {@code stopped} at the end. A line {@code stop} on standard input makes it
 * close the consumer (drain, commit offsets, close the journals), write {@code stats-<run>.json} (the run's counts
 * and its windows' metrics) and exit with 0. The end of standard input without {@code stop}, or the exit of its
 * parent process, means the driver died: it halts at once with exit code 4, as after a crash, rather than run on
 * orphaned. Any failure exits with 1 and a stack trace on standard error.
 */
@Command(name = "billing-consumer",
    description = "The demo's billing consumer (started by the demo, not by hand).")
public final class BillingConsumer implements Callable<Integer> {

  /** Exit code when the driver went away without a {@code stop} line (the consumer halts at once). */
  static final int EXIT_DRIVER_GONE = 4;

  /** Exit code when the dedup consumer stopped on an error (its exception handler was called). */
  static final int EXIT_CONSUMER_FAILED = 5;

  /**
   * How often the status line is written, ms: often enough that the driver sees a restarted run's first credits
   * before it has caught up with a small backlog, so that its next kill can still land.
   */
  static final long STATUS_INTERVAL_MS = 50;

  /** The header holding the payment id: the identity the window checks. */
  static final String MESSAGE_ID = "message-id";

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  @Option(names = "--bootstrap-servers", required = true, description = "Kafka bootstrap servers.")
  String bootstrapServers;

  @Option(names = "--topic", required = true, description = "The topic to consume.")
  String topic;

  @Option(names = "--group", required = true, description = "The consumer group (windows are per group).")
  String group;

  @Option(names = "--work-dir", required = true, description = "Where the books, logs and journal are.")
  Path workDir;

  @Option(names = "--run", required = true, description = "This run's number, 1 for the first start.")
  int run;

  @Option(names = "--mode", required = true, description = "RECORD_FIRST or EFFECT_FIRST.")
  AtomicityMode mode;

  @Option(names = "--window-ms", required = true, description = "The dedup window W in milliseconds.")
  long windowMs;

  @Option(names = "--lease-ms", defaultValue = "10000", description = "The claim lease in milliseconds (default:"
      + " ${DEFAULT-VALUE}).")
  long leaseMs;

  @Option(names = "--max-batch", defaultValue = "100", description = "The largest decision batch (default:"
      + " ${DEFAULT-VALUE}).")
  int maxBatch;

  @Option(names = "--ledger-key", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Refuse a second ledger line or receipt for a payment id (default: true).")
  boolean ledgerKey;

  private final PrintStream out = System.out;

  /**
   * Runs the consumer until {@code stop} arrives on standard input.
   *
   * @param args see the options
   */
  public static void main(String[] args) {
    System.exit(new CommandLine(new BillingConsumer()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    say("started " + System.currentTimeMillis());
    CountDownLatch stop = watchDriver();
    // Load the JSON codec (seconds on a loaded machine) beside the start of Vert.x and Kafka rather than in the first
    // handler call, whose claim's lease is already running.
    Thread warmUp = new Thread(() -> Payment.fromJson(new Payment("warm-up", "acct-000", 1).toJson()), "warm-up");
    warmUp.setDaemon(true);
    warmUp.start();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicLong deliveries = new AtomicLong();
    AtomicLong handled = new AtomicLong();
    Vertx vertx = Vertx.vertx();
    try (PaymentBook ledger = PaymentBook.open(workDir.resolve("ledger.log"), ledgerKey);
         PaymentBook receipts = PaymentBook.open(workDir.resolve("receipts.log"), ledgerKey);
         PaymentBook handledLog = PaymentBook.open(workDir.resolve("handled.log"), false);
         PaymentBook deadLetters = PaymentBook.open(workDir.resolve("dead-letters.log"), false)) {
      DeliveryLog deliveryLog = new DeliveryLog(workDir.resolve("deliveries-" + run + ".log"));
      IdentityExtractor<String, String> byHeader = IdentityExtractor.header(MESSAGE_ID);
      DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>create(vertx, kafkaConfig(),
              options())
          .meterRegistry(registry)
          .identity(record -> {
            RecordIdentity id = byHeader.identify(record);
            deliveries.incrementAndGet();
            deliveryLog.log(record.partition(), record.offset(), id == null ? "-" : id.id());
            return id;
          })
          .handler(record -> {
            Payment p = Payment.fromJson(record.value());
            // Blocking file writes: on a worker, in order per partition (ordered on the partition's context).
            return vertx.executeBlocking(() -> {
              // The call is noted before its effect, so that a kill cannot leave an effect without its call: the
              // report tells a call the kill cut off (no ledger or receipt line of its own) from one the key refused.
              handledLog.append(p.paymentId(), run, record.partition(), record.offset());
              ledger.append(p.paymentId(), p.account(), p.amountCents(), record.partition(), record.offset(), run);
              receipts.append(p.paymentId(), p.account(), p.amountCents(), record.partition(), record.offset(), run);
              handled.incrementAndGet();
              return null;
            }, true);
          })
          .deadLetterHandler(dead -> vertx.executeBlocking(() -> {
            deadLetters.append("offset-" + dead.record().partition() + "-" + dead.record().offset(), dead.reason(),
                dead.detail().replaceAll("\\s+", "_"));
            return null;
          }, true));
      consumer.exceptionHandler(failure -> {
        // The consumer stopped (a window it could not open, an error on its poll thread): this run cannot go on,
        // and the driver must hear of it rather than wait for offsets that will not be committed.
        System.err.println("billing-consumer: the consumer stopped: " + failure);
        Runtime.getRuntime().halt(EXIT_CONSUMER_FAILED);
      });
      consumer.subscribe(topic).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      say("subscribed " + System.currentTimeMillis());
      Thread reporter = startReporter(consumer, registry, deliveries, handled);

      stop.await();

      reporter.interrupt();
      reporter.join();
      List<Meter> meters = new ArrayList<>(registry.getMeters()); // the windows remove theirs when they stop
      consumer.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      deliveryLog.close();
      writeStats(meters, deliveries.get(), handled.get());
      status(meters, deliveries.get(), handled.get()); // the final counts, for the driver's last progress line
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    say("stopped");
    return 0;
  }

  private Map<String, String> kafkaConfig() {
    return Map.of(
        "bootstrap.servers", bootstrapServers,
        "group.id", group,
        "group.instance.id", group + "-billing-1",
        "session.timeout.ms", "6000",
        "heartbeat.interval.ms", "500",
        "auto.offset.reset", "earliest",
        "max.poll.records", "500",
        "key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer",
        "value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
  }

  private DedupKafkaOptions options() {
    return new DedupKafkaOptions()
        .setDedup(new DedupOptions()
            .setWindowMs(windowMs)
            .setLeaseMs(leaseMs)
            .setMaxBatch(maxBatch)
            .setJournalDir(workDir.resolve("journal").toString()))
        .setMode(mode)
        .setPollTimeoutMs(20);
  }

  /** Prints progress every {@value #STATUS_INTERVAL_MS} ms and, once, the instants the partitions were assigned and the first answer. */
  private Thread startReporter(DedupKafkaConsumer<String, String> consumer, SimpleMeterRegistry registry,
      AtomicLong deliveries, AtomicLong handled) {
    Thread t = new Thread(() -> {
      boolean assigned = false;
      boolean answered = false;
      long nextStatusNs = System.nanoTime();
      while (!Thread.currentThread().isInterrupted()) {
        if (!assigned && !consumer.assignment().isEmpty()) {
          assigned = true;
          say("assigned " + System.currentTimeMillis());
        }
        if (!answered && sum(registry.getMeters(), "dedup.kafka.records") > 0) {
          answered = true;
          say("first-answer " + System.currentTimeMillis());
        }
        if (System.nanoTime() - nextStatusNs >= 0) {
          nextStatusNs += TimeUnit.MILLISECONDS.toNanos(STATUS_INTERVAL_MS);
          status(registry.getMeters(), deliveries.get(), handled.get());
        }
        // Until the first answer, look every 0.2 ms (it is the restart time being measured); then every 20 ms.
        LockSupport.parkNanos(answered ? 20_000_000 : 200_000);
      }
    }, "billing-reporter");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private void status(List<Meter> meters, long deliveries, long handled) {
    say("status " + deliveries + " " + handled + " " + (long) sum(meters, "dedup.kafka.duplicates") + " "
        + (long) sum(meters, "dedup.kafka.lapsed.claims") + " " + (long) sum(meters, "dedup.kafka.in.flight.waits"));
  }

  /**
   * Watches the driver from the start of the run: a {@code stop} line on standard input counts the returned latch
   * down; the end of standard input without one, or the driver's exit, means the driver is gone (killed, say), and
   * this JVM then halts at once with {@link #EXIT_DRIVER_GONE}, as a crash would, instead of running on orphaned.
   */
  static CountDownLatch watchDriver() {
    CountDownLatch stop = new CountDownLatch(1);
    Thread t = new Thread(() -> {
      try {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
          if (line.trim().equals("stop")) {
            stop.countDown();
            return;
          }
        }
      } catch (java.io.IOException e) {
        // as the end of the input
      }
      driverGone("its standard input ended without a stop line");
    }, "driver-watch");
    t.setDaemon(true);
    t.start();
    ProcessHandle.current().parent().ifPresent(parent -> parent.onExit()
        .thenRun(() -> driverGone("its parent process " + parent.pid() + " exited")));
    return stop;
  }

  private static void driverGone(String why) {
    System.err.println("billing-consumer: the driver is gone (" + why + "); halting");
    System.err.flush();
    Runtime.getRuntime().halt(EXIT_DRIVER_GONE);
  }

  private void writeStats(List<Meter> meters, long deliveries, long handled) throws java.io.IOException {
    JsonObject window = new JsonObject()
        .put("accepted", sum(meters, "dedup.verdicts", "verdict", "accepted"))
        .put("duplicate", sum(meters, "dedup.verdicts", "verdict", "duplicate"))
        .put("inFlight", sum(meters, "dedup.verdicts", "verdict", "in_flight"))
        .put("conflict", sum(meters, "dedup.verdicts", "verdict", "conflict"))
        .put("heldIds", sum(meters, "dedup.held.ids"))
        .put("expiredLeases", sum(meters, "dedup.expired.leases"))
        .put("rejected", sum(meters, "dedup.rejected"));
    long ageCount = 0;
    double ageTotalMs = 0;
    double ageMaxMs = 0;
    for (Meter m : meters) {
      if (m instanceof Timer timer && m.getId().getName().equals("dedup.duplicate.age")) {
        HistogramSnapshot s = timer.takeSnapshot();
        ageCount += s.count();
        ageTotalMs += s.total(TimeUnit.MILLISECONDS);
        ageMaxMs = Math.max(ageMaxMs, s.max(TimeUnit.MILLISECONDS));
      }
    }
    window.put("duplicateAgeCount", ageCount)
        .put("duplicateAgeMeanMs", ageCount == 0 ? 0 : ageTotalMs / ageCount)
        .put("duplicateAgeMaxMs", ageMaxMs);
    JsonObject kafka = new JsonObject()
        .put("records", sum(meters, "dedup.kafka.records"))
        .put("duplicates", sum(meters, "dedup.kafka.duplicates"))
        .put("inFlightWaits", sum(meters, "dedup.kafka.in.flight.waits"))
        .put("lapsedClaims", sum(meters, "dedup.kafka.lapsed.claims"))
        .put("handlerFailures", sum(meters, "dedup.kafka.handler.failures"))
        .put("unavailable", sum(meters, "dedup.kafka.unavailable"))
        .put("deadLetters", sum(meters, "dedup.kafka.dead.letters"));
    JsonObject stats = new JsonObject().put("run", run).put("deliveries", deliveries).put("handled", handled)
        .put("window", window).put("kafka", kafka);
    Path tmp = workDir.resolve("stats-" + run + ".json.tmp");
    Files.writeString(tmp, stats.encodePrettily());
    Files.move(tmp, workDir.resolve("stats-" + run + ".json"), StandardCopyOption.ATOMIC_MOVE);
  }

  /** Sums a counter, function counter or gauge over its tags (partitions), optionally one tag value only. */
  static double sum(Iterable<Meter> meters, String name, String... tag) {
    double total = 0;
    for (Meter m : meters) {
      if (!m.getId().getName().equals(name) || (tag.length == 2 && !tag[1].equals(m.getId().getTag(tag[0])))) {
        continue;
      }
      if (m instanceof Counter c) {
        total += c.count();
      } else if (m instanceof FunctionCounter c) {
        total += c.count();
      } else if (m instanceof Gauge g) {
        total += g.value();
      }
    }
    return total;
  }

  private void say(String line) {
    synchronized (out) {
      out.println(line);
      out.flush();
    }
  }
}
