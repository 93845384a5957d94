package io.github.vertxdedup.examples.demo;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The one-command demo: a billing service consuming {@code payment.succeeded} from an at-least-once topic, whose
 * consumer is killed with SIGKILL midway and restarted, and whose ledger must still credit every payment exactly
 * once. See {@code docs/demo.md} for what each line of the summary means.
 *
 * <ol>
 *   <li>Starts a one-node KRaft broker in this JVM ({@link LocalKafka}), or uses {@code --bootstrap-servers}.
 *   <li>Creates {@code payment.succeeded} and commits the start offsets of a new consumer group (so records already
 *       on an existing broker's topic are not read).
 *   <li>Publishes {@code --events} payments at {@code --rate} per second, keyed and headed ({@code message-id}) by
 *       their payment id; a {@code --duplicate-rate} share is published again at once with the same id, as a producer
 *       retry after a lost acknowledgement does.
 *   <li>Runs the consumer ({@link BillingConsumer}) in a JVM of its own. Each time it has credited another
 *       {@code 1 / (kills + 1)} of the payments, kills it with SIGKILL and starts it again on the same journal and
 *       with the same static group membership: the broker redelivers what the dead consumer had not committed.
 *   <li>Once everything published is committed by the group, stops the last run normally, reads the files and prints
 *       the summary ({@link DemoReport}).
 * </ol>
 *
 * <p>Exit codes: 0 every payment credited exactly once with one receipt; 1 the ledger or the receipts are wrong
 * (mismatches above 0); 2 bad flags; 3 the demo could not run (the consumer failed or stalled, the broker failed);
 * 4 the ledger and receipts are right but fewer SIGKILLs happened than {@code --kills} asked for.
 */
@Command(name = "demo", sortOptions = false, exitCodeOnExecutionException = 3,
    description = {"Billing on an at-least-once Kafka topic: payments with producer retries, a consumer killed with"
        + " SIGKILL midway and restarted, and a ledger that must credit every payment exactly once."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:every payment credited exactly once, one receipt each", "1:the ledger or receipts are wrong",
        "2:bad flags", "3:the demo could not run (consumer failed or stalled, broker failed)",
        "4:the ledger is right, but fewer SIGKILLs happened than --kills asked for"})
public final class BillingDemo implements Callable<Integer> {

  /** The topic of the billing story. */
  public static final String TOPIC = "payment.succeeded";
  /** Exit code: the ledger or the receipts are wrong. */
  public static final int EXIT_MISMATCH = 1;
  /** Exit code: the demo could not run. */
  public static final int EXIT_FAILED = 3;
  /** Largest {@code --events}. */
  static final int MAX_EVENTS = 1_000_000;
  /** Largest {@code --partitions}. */
  static final int MAX_PARTITIONS = 64;
  /** Largest {@code --kills}. */
  static final int MAX_KILLS = 10;
  /**
   * Fewest {@code --events} per {@code --kills}: kill {@code i} is due once {@code i / (kills + 1)} of the payments
   * are credited, and the driver sees the consumer's count every {@value BillingConsumer#STATUS_INTERVAL_MS} ms. A
   * restarted run works off its backlog in bursts of hundreds of records in that time: with fewer payments between
   * two kills it can finish them all before the next kill is due, and the run then ends with fewer kills than asked.
   */
  static final int MIN_EVENTS_PER_KILL = 1_000;
  /** Exit code: the ledger and receipts are right, but fewer SIGKILLs happened than {@code --kills} asked for. */
  public static final int EXIT_FEWER_KILLS = 4;
  /** How long the consumer may take to commit everything after the last record was published. */
  static final long CATCH_UP_TIMEOUT_MS = 120_000;

  @Spec
  CommandSpec spec;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT[,...]",
      description = "Use this Kafka cluster instead of starting one in-process.")
  String bootstrapServers;

  @Option(names = "--events", paramLabel = "N", defaultValue = "20000", description = "Payments to publish, 1..1,000,000 (default:"
      + " ${DEFAULT-VALUE}).")
  int events;

  @Option(names = "--duplicate-rate", paramLabel = "SHARE", defaultValue = "0.1", description = "Share of payments published twice with"
      + " the same id (a producer retry), 0..1 (default: ${DEFAULT-VALUE}).")
  double duplicateRate;

  @Option(names = "--window", defaultValue = "10m", paramLabel = "DURATION", description = "The dedup window W:"
      + " whole minutes from 1m to 366d, as 10m, 2h, 1d or PT10M (default: ${DEFAULT-VALUE}).")
  String window;

  @Option(names = "--mode", defaultValue = "effect-first", paramLabel = "effect-first|record-first",
      description = "The atomicity mode (default: ${DEFAULT-VALUE}; see docs/demo.md).")
  String mode;

  @Option(names = "--partitions", paramLabel = "N", defaultValue = "4", description = "Partitions of a topic the demo creates,"
      + " 1..64 (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(names = "--kills", paramLabel = "N", defaultValue = "1", description = "Times the consumer is killed with SIGKILL, 0..10"
      + " (default: ${DEFAULT-VALUE}).")
  int kills;

  @Option(names = "--rate", paramLabel = "PER_SECOND", defaultValue = "2000", description = "Payments published per second, 1..1,000,000"
      + " (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(names = "--ledger-key", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "The ledger and receipts refuse a second entry for a payment id (default: on). --no-ledger-key"
          + " shows what a repeat in flight at a kill does without it.")
  boolean ledgerKey;

  @Option(names = "--work-dir", paramLabel = "DIR", description = "Where the ledger, receipts, logs and journal"
      + " go (default: a new temporary directory, kept).")
  Path workDir;

  @Option(names = "--seed", paramLabel = "N", description = "Seed of the payments and duplicates (default: random).")
  Long seed;

  private PrintStream out = System.out;

  /**
   * Runs the demo.
   *
   * @param args the flags (see {@code --help})
   */
  public static void main(String[] args) {
    CommandLine cl = new CommandLine(new BillingDemo()).setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println("FAILED: " + e);
      e.printStackTrace(cmd.getErr());
      return EXIT_FAILED;
    });
    System.exit(cl.execute(args));
  }

  /** Sets where progress and the summary go (standard output by default); for tests. */
  BillingDemo output(PrintStream out) {
    this.out = out;
    return this;
  }

  /**
   * Parses a window: ISO-8601 ({@code PT10M}) or a number with a unit {@code m}, {@code h} or {@code d}
   * ({@code s} and {@code ms} are parsed too, so that the limit check can name them).
   *
   * @param text the flag's value
   * @return the duration
   * @throws IllegalArgumentException if it is neither form
   */
  static Duration parseDuration(String text) {
    Matcher m = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)").matcher(text.trim().toLowerCase(Locale.ROOT));
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    try {
      return Duration.parse(text.trim().toUpperCase(Locale.ROOT));
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("not a duration: '" + text + "' (use e.g. 10m, 2h, 1d or PT10M)");
    }
  }

  /**
   * Checks the flags as a whole.
   *
   * @return the window W
   * @throws ParameterException naming the flag and its limit
   */
  Duration validate() {
    if (events < 1 || events > MAX_EVENTS) {
      throw bad("--events must be between 1 and " + MAX_EVENTS + " but was " + events);
    }
    if (!(duplicateRate >= 0 && duplicateRate <= 1)) {
      throw bad("--duplicate-rate must be between 0 and 1 but was " + duplicateRate);
    }
    if (partitions < 1 || partitions > MAX_PARTITIONS) {
      throw bad("--partitions must be between 1 and " + MAX_PARTITIONS + " but was " + partitions);
    }
    if (kills < 0 || kills > MAX_KILLS) {
      throw bad("--kills must be between 0 and " + MAX_KILLS + " but was " + kills);
    }
    if (events < (long) MIN_EVENTS_PER_KILL * kills) {
      throw bad("--kills " + kills + " needs --events of at least " + MIN_EVENTS_PER_KILL * kills + " ("
          + MIN_EVENTS_PER_KILL + " payments per kill, so that the consumer is still busy when each kill is due)"
          + " but --events was " + events);
    }
    if (bootstrapServers != null) {
      for (String server : bootstrapServers.split(",", -1)) {
        Matcher m = Pattern.compile("(.+):(\\d{1,5})").matcher(server.trim());
        if (!m.matches() || Integer.parseInt(m.group(2)) < 1 || Integer.parseInt(m.group(2)) > 65_535) {
          throw bad("--bootstrap-servers must be HOST:PORT[,HOST:PORT...] with ports 1..65535 but held '" + server
              + "'");
        }
      }
    }
    if (workDir != null && Files.exists(workDir) && !Files.isDirectory(workDir)) {
      throw bad("--work-dir " + workDir + " is not a directory");
    }
    if (rate < 1 || rate > MAX_EVENTS) {
      throw bad("--rate must be between 1 and " + MAX_EVENTS + " payments per second but was " + rate);
    }
    atomicityMode();
    long maxMinutes = TimeUnit.MILLISECONDS.toMinutes(DedupOptions.MAX_WINDOW_MS);
    Duration w;
    try {
      w = parseDuration(window);
    } catch (IllegalArgumentException e) {
      throw bad("--window must be a whole number of minutes from 1m to " + maxMinutes / (24 * 60) + "d, written"
          + " as 10m, 2h, 1d or PT10M, but was '" + window + "'");
    }
    if (w.toMinutes() < 1 || w.toMinutes() > maxMinutes || !w.equals(Duration.ofMinutes(w.toMinutes()))) {
      throw bad("--window must be a whole number of minutes from 1m to " + maxMinutes / (24 * 60) + "d but was "
          + window + " (the demo runs for up to a few minutes: a shorter window could forget a payment before its"
          + " redelivery)");
    }
    return w;
  }

  AtomicityMode atomicityMode() {
    return switch (mode.toLowerCase(Locale.ROOT)) {
      case "effect-first" -> AtomicityMode.EFFECT_FIRST;
      case "record-first" -> AtomicityMode.RECORD_FIRST;
      default -> throw bad("--mode must be effect-first or record-first but was " + mode);
    };
  }

  private ParameterException bad(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  @Override
  public Integer call() throws Exception {
    Duration w = validate();
    long theSeed = seed != null ? seed : new Random().nextLong();
    Path dir;
    if (workDir != null) {
      if (Files.exists(workDir.resolve("ledger.log"))) {
        throw bad("--work-dir " + workDir + " holds a previous run's ledger; choose an empty directory");
      }
      try {
        dir = Files.createDirectories(workDir);
        Files.createTempFile(dir, "write-test", ".tmp").toFile().delete();
      } catch (java.io.IOException | SecurityException e) {
        throw bad("--work-dir " + workDir + " cannot be created or written: " + e);
      }
    } else {
      dir = Files.createTempDirectory("vertx-dedup-demo-");
    }
    try {
      return run(w, theSeed, dir);
    } finally {
      if (workDir == null && isEmptyDirectory(dir)) {
        Files.deleteIfExists(dir); // the run failed before writing anything: leave nothing behind
      }
    }
  }

  private static boolean isEmptyDirectory(Path dir) throws java.io.IOException {
    try (java.util.stream.Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    } catch (java.nio.file.NoSuchFileException e) {
      return false;
    }
  }

  private int run(Duration w, long theSeed, Path dir) throws Exception {
    String runId = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
    long startNs = System.nanoTime();
    LocalKafka broker = null;
    List<ConsumerProcess> runs = new ArrayList<>();
    Thread cleanup = new Thread(() -> runs.forEach(c -> c.process.destroyForcibly()), "demo-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      String bootstrap = bootstrapServers;
      if (bootstrap == null) {
        out.println("Starting a Kafka broker (KRaft, one node) in this JVM ...");
        broker = LocalKafka.start(partitions);
        bootstrap = broker.bootstrapServers();
      }
      try {
        LocalKafka.createTopic(bootstrap, TOPIC, partitions);
      } catch (java.util.concurrent.TimeoutException e) {
        out.printf(Locale.ROOT, "FAILED: %s (after %.0f s)%n", e.getMessage(), seconds(startNs));
        return EXIT_FAILED;
      }
      String group = "billing-" + runId;
      try (Admin admin = Admin.create(DemoTopic.adminConfig(bootstrap))) {
        int topicPartitions = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS)
            .get(TOPIC).partitions().size();
        Map<TopicPartition, Long> start = DemoTopic.endOffsets(admin, topicPartitions);
        Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
        start.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o)));
        admin.alterConsumerGroupOffsets(group, commit).all().get(30, TimeUnit.SECONDS);

        out.printf(Locale.ROOT, "Broker %s, topic %s (%d partitions), group %s%n", bootstrap, TOPIC, topicPartitions,
            group);
        out.printf(Locale.ROOT, "Mode %s, window %s, ledger key %s; %,d payments at %,d/s, %.0f %% published twice;"
                + " %d kill(s); seed %d%n", mode, w, ledgerKey ? "on" : "off", events, rate, duplicateRate * 100,
            kills, theSeed);
        out.println("Work directory " + dir);
        out.println();

        List<String> consumerArgs = List.of("--bootstrap-servers", bootstrap, "--topic", TOPIC, "--group", group,
            "--work-dir", dir.toString(), "--mode", atomicityMode().name(), "--window-ms",
            Long.toString(w.toMillis()), ledgerKey ? "--ledger-key" : "--no-ledger-key");
        Publisher publisher = new Publisher(bootstrap, "pay-" + runId + "-", new Random(theSeed));
        int failed = runConsumers(admin, group, topicPartitions, dir, consumerArgs, publisher, runs, startNs);
        publisher.join();
        if (failed != 0) {
          return failed;
        }
        if (publisher.failure.get() != null) {
          out.println("FAILED: the producer failed: " + publisher.failure.get());
          return EXIT_FAILED;
        }
        List<DemoReport.RunTimes> times = new ArrayList<>();
        for (ConsumerProcess c : runs) {
          times.add(new DemoReport.RunTimes(c.run, c.startedAtMs, c.subscribedAtMs, c.assignedAtMs,
              c.firstAnswerAtMs, c.killedAtMs, c.lapsedClaims));
        }
        DemoReport report = DemoReport.compute(new ArrayList<>(publisher.published), dir, times);
        report.print(out, mode, ledgerKey, dir);
        out.printf(Locale.ROOT, "  %-28s %,10.1f s%n", "took", (System.nanoTime() - startNs) / 1e9);
        out.println();
        if (report.mismatches() > 0) {
          out.println("RESULT: the ledger is WRONG: " + report.mismatches() + " mismatch(es); " + explainFailure());
          return EXIT_MISMATCH;
        }
        if (report.kills < kills) {
          out.println("RESULT: the ledger is right (every payment credited exactly once with one receipt), but only "
              + report.kills + " of the " + kills + " SIGKILL(s) asked for happened: the consumer caught up before"
              + " the rest were due (raise --events or lower --rate).");
          return EXIT_FEWER_KILLS;
        }
        out.println("RESULT: OK, every payment credited exactly once with one receipt, across " + report.kills
            + " SIGKILL(s).");
        return 0;
      }
    } finally {
      runs.forEach(c -> c.process.destroyForcibly());
      if (broker != null) {
        broker.close();
      }
      Runtime.getRuntime().removeShutdownHook(cleanup);
    }
  }

  private String explainFailure() {
    if (!ledgerKey) {
      return "without the ledger key, a payment in flight at a kill is credited again (see docs/demo.md).";
    }
    if (atomicityMode() == AtomicityMode.RECORD_FIRST) {
      return "record-first loses the effect of a payment whose id was recorded but not yet credited at a kill"
          + " (see docs/demo.md).";
    }
    return "see handled.log and ledger.log in the work directory.";
  }

  /**
   * Runs the consumer, kills and restarts it, and stops it once the group has committed everything published.
   *
   * @return 0, or {@link #EXIT_FAILED} (after printing why)
   */
  private int runConsumers(Admin admin, String group, int topicPartitions, Path dir, List<String> consumerArgs,
      Publisher publisher, List<ConsumerProcess> runs, long startNs) throws Exception {
    ConsumerProcess current = startRun(1, dir, consumerArgs, runs);
    // Publish once the consumer is in its group, so that the kill lands while payments still flow.
    long readyDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (current.assignedAtMs < 0) {
      Thread.sleep(20);
      if (!current.process.isAlive() || System.nanoTime() - readyDeadlineNs > 0) {
        return failed(current, "was not assigned its partitions within 120 s");
      }
    }
    out.printf(Locale.ROOT, "%6.1f s  consumer run 1 (pid %d) ready: JVM in main after %,d ms, subscribed %,d ms,"
            + " partitions assigned and windows opened %,d ms; publishing%n", seconds(startNs), current.pid(),
        current.startedAtMs - current.launchedAtMs, current.subscribedAtMs - current.launchedAtMs,
        current.assignedAtMs - current.launchedAtMs);
    publisher.start();
    long creditedBefore = 0; // by the killed runs
    long nextProgressNs = System.nanoTime();
    long catchUpDeadlineNs = Long.MAX_VALUE;
    boolean reportedRestart = true;
    while (true) {
      Thread.sleep(20);
      if (!current.process.isAlive()) {
        return failed(current, "exited on its own");
      }
      long credited = creditedBefore + current.handled;
      if (System.nanoTime() - nextProgressNs >= 0) {
        nextProgressNs += TimeUnit.SECONDS.toNanos(1);
        progress(current, publisher, startNs);
      }
      if (!reportedRestart && current.firstAnswerAtMs >= 0) {
        reportedRestart = true;
        long kill = runs.get(runs.size() - 2).killedAtMs;
        out.printf(Locale.ROOT, "%6.1f s  consumer run %d (pid %d) answers again %,d ms after the kill (JVM in main"
                + " %,d ms, subscribed %,d ms, partitions assigned and windows rebuilt from the journal %,d ms)%n",
            seconds(startNs), current.run, current.pid(), current.firstAnswerAtMs - kill, current.startedAtMs - kill,
            current.subscribedAtMs - kill, current.assignedAtMs - kill);
      }
      int killsDone = current.run - 1;
      // A restarted run is killed again only once it has credited something itself, so that every run's restart
      // and recovery is exercised (right after a kill the running total may already be past the next threshold).
      if (killsDone < kills && current.handled > 0
          && credited >= Math.max(1, (long) events * (killsDone + 1) / (kills + 1))) {
        current.kill();
        out.printf(Locale.ROOT, "%6.1f s  SIGKILL consumer run %d (pid %d) after %,d payments credited;"
                + " restarting it%n", seconds(startNs), current.run, current.pid(), credited);
        creditedBefore += current.handled;
        current = startRun(current.run + 1, dir, consumerArgs, runs);
        reportedRestart = false;
        continue;
      }
      if (!publisher.isAlive()) {
        if (catchUpDeadlineNs == Long.MAX_VALUE) {
          catchUpDeadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CATCH_UP_TIMEOUT_MS);
        }
        if (DemoTopic.allCommitted(admin, topicPartitions, group)) {
          if (killsDone < kills) {
            // Only a record-first run that lost credits can stop short of a kill's threshold.
            out.printf(Locale.ROOT, "%6.1f s  everything is consumed before kill %d could come (%,d payments"
                + " credited)%n", seconds(startNs), killsDone + 1, credited);
          }
          break;
        }
        if (System.nanoTime() - catchUpDeadlineNs > 0) {
          return failed(current, "did not commit everything published within " + CATCH_UP_TIMEOUT_MS / 1000
              + " s after the last payment was published");
        }
      }
    }
    out.printf(Locale.ROOT, "%6.1f s  everything published is committed; stopping consumer run %d%n",
        seconds(startNs), current.run);
    int exit = current.stop(60_000);
    if (exit != 0 || !current.stopped) {
      return failed(current, "did not stop cleanly (exit " + exit + ")");
    }
    progress(current, publisher, startNs); // its last status line, written after it closed: the final counts
    return 0;
  }

  /** Prints a progress line: what was published, and the current run's counts from its last status line. */
  private void progress(ConsumerProcess current, Publisher publisher, long startNs) {
    String consumer = current.assignedAtMs < 0
        ? "starting: new JVM, joining the group, rebuilding its windows from the journal"
        : String.format(Locale.ROOT, "received %,7d, handled %,7d, duplicates dropped %,6d, in-flight waits %,d",
            current.deliveries, current.handled, current.dropped, current.inFlightWaits);
    out.printf(Locale.ROOT, "%6.1f s  published %,7d (+%,d retries)  consumer run %d: %s%n", seconds(startNs),
        publisher.payments, publisher.retries, current.run, consumer);
  }

  private int failed(ConsumerProcess c, String what) {
    String exit = c.process.isAlive() ? "still running" : "exit code " + c.process.exitValue();
    out.printf(Locale.ROOT, "FAILED: consumer run %d (pid %d, %s) %s; the end of its standard error (%s):%n%s%n",
        c.run, c.pid(), exit, what, c.errFile, c.errTail(20));
    return EXIT_FAILED;
  }

  private static double seconds(long startNs) {
    return (System.nanoTime() - startNs) / 1e9;
  }

  private ConsumerProcess startRun(int run, Path dir, List<String> consumerArgs, List<ConsumerProcess> runs)
      throws java.io.IOException {
    List<String> args = new ArrayList<>(consumerArgs);
    args.add("--run");
    args.add(Integer.toString(run));
    ConsumerProcess c = ConsumerProcess.start(run, dir, args);
    runs.add(c);
    return c;
  }

  /**
   * Publishes the payments at {@code --rate} per second on its own thread; records what the broker acknowledged
   * (partition, offset) for the report.
   */
  private final class Publisher extends Thread {
    final String idPrefix;
    final Random random;
    final String bootstrap;
    final ConcurrentLinkedQueue<DemoReport.Published> published = new ConcurrentLinkedQueue<>();
    final AtomicReference<Exception> failure = new AtomicReference<>();
    volatile int payments;
    volatile int retries;

    Publisher(String bootstrap, String idPrefix, Random random) {
      super("demo-publisher");
      setDaemon(true);
      this.bootstrap = bootstrap;
      this.idPrefix = idPrefix;
      this.random = random;
    }

    @Override
    public void run() {
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
          new StringSerializer())) {
        long startNs = System.nanoTime();
        for (int i = 0; i < events; i++) {
          // Pace: payment i goes out at i / rate seconds.
          long dueNs = startNs + (long) (i * 1e9 / rate);
          long waitNs = dueNs - System.nanoTime();
          if (waitNs > 1_000_000) {
            Thread.sleep(waitNs / 1_000_000);
          }
          Payment payment = new Payment(idPrefix + i, String.format(Locale.ROOT, "acct-%03d", random.nextInt(100)),
              100 + random.nextInt(50_000));
          send(producer, payment, false);
          payments = i + 1;
          if (random.nextDouble() < duplicateRate) {
            send(producer, payment, true); // the producer did not see the first acknowledgement and sends again
            retries++;
          }
        }
        producer.flush();
      } catch (Exception e) {
        failure.compareAndSet(null, e);
      }
    }

    private void send(KafkaProducer<String, String> producer, Payment payment, boolean retry) {
      ProducerRecord<String, String> record = new ProducerRecord<>(TOPIC, payment.paymentId(), payment.toJson());
      record.headers().add(BillingConsumer.MESSAGE_ID, payment.paymentId().getBytes(StandardCharsets.UTF_8));
      producer.send(record, (meta, e) -> {
        if (e != null) {
          failure.compareAndSet(null, e);
        } else {
          published.add(new DemoReport.Published(meta.partition(), meta.offset(), payment, retry));
        }
      });
    }
  }
}
