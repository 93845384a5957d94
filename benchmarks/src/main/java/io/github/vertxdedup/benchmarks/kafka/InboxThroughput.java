package io.github.vertxdedup.benchmarks.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.inbox.DedupInboxOptions;
import io.github.vertxdedup.inbox.InboxEntry;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.github.vertxdedup.kafka.testkit.LocalPostgres;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Tuple;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Records per second of the inbox mode against a plain inbox and against effect-first with the window only, on the
 * same topic and the same PostgreSQL server (a private cluster, {@link LocalPostgres}), at several duplicate rates;
 * plus the database statements per record, counted by {@code pg_stat_statements} (each is a round trip: the client
 * sends a transaction's statements one after the other).
 *
 * <ul>
 *   <li>{@code inbox}: {@code DedupKafkaConsumer} in {@code AtomicityMode.INBOX}; the handler inserts one ledger row
 *   in the inbox's transaction.</li>
 *   <li>{@code plain-inbox}: a plain Kafka consumer on a thread of its own; every record goes to
 *   {@link DedupInbox#execute} (the same transaction: the inbox row and the ledger row), the partitions of a poll in
 *   parallel, one record at a time per partition, as the dedup consumer; offsets committed after each poll's
 *   records.</li>
 *   <li>{@code effect-first}: {@code DedupKafkaConsumer} in {@code AtomicityMode.EFFECT_FIRST}; the handler inserts
 *   the ledger row on its own (one autocommitted statement): the window alone, no inbox.</li>
 * </ul>
 *
 * <p>Each run reads the whole topic in a new consumer group, with the inbox and ledger tables emptied before, and is
 * timed from {@code subscribe} until the group's committed offsets reach the topic's end; after it, the ledger must
 * hold every distinct id exactly once, or the run fails. Rounds in turn, the scenario order rotating; round 1 is
 * warm-up. Arguments (system properties): {@code bench.records} (20,000), {@code bench.rounds} (3),
 * {@code bench.duplicates} (0,10,50 percent), {@code bench.partitions} (4).
 */
public final class InboxThroughput {

  private static final String[] SCENARIOS = {"inbox", "plain-inbox", "effect-first"};

  private InboxThroughput() {
  }

  /**
   * Runs the benchmark and prints one line per run and a summary per duplicate rate.
   *
   * @param args none
   * @throws Exception on any failure
   */
  public static void main(String[] args) throws Exception {
    int records = Integer.getInteger("bench.records", 20_000);
    int rounds = Integer.getInteger("bench.rounds", 3);
    int partitions = Integer.getInteger("bench.partitions", 4);
    String[] rates = System.getProperty("bench.duplicates", "0,10,50").split(",");
    PrintStream out = System.out;
    try (LocalKafka kafka = LocalKafka.start(partitions);
        LocalPostgres pg = LocalPostgres.start(List.of("shared_preload_libraries=pg_stat_statements",
            "pg_stat_statements.track=all"))) {
      pg.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements; " + DedupInbox.ddl("bench_inbox")
          + "; CREATE TABLE bench_ledger (id text NOT NULL)");
      out.printf("records %d, partitions %d, rounds %d (round 1 warm-up)%n", records, partitions, rounds);
      int group = 0;
      for (String rate : rates) {
        int percent = Integer.parseInt(rate.trim());
        String topic = "inbox-bench-" + percent;
        int distinct = publish(kafka.bootstrapServers(), topic, partitions, records, percent);
        Map<String, List<double[]>> results = new HashMap<>();
        for (int round = 1; round <= rounds; round++) {
          for (int k = 0; k < SCENARIOS.length; k++) {
            String scenario = SCENARIOS[(k + round - 1) % SCENARIOS.length];
            pg.psql("TRUNCATE bench_inbox, bench_ledger; SELECT pg_stat_statements_reset()");
            long startNs = System.nanoTime();
            run(scenario, kafka.bootstrapServers(), pg, topic, "g-" + (++group), records, partitions);
            double seconds = (System.nanoTime() - startNs) / 1e9;
            long statements = Long.parseLong(pg.psql("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                + " WHERE query NOT ILIKE '%pg_stat_statements%' AND query NOT ILIKE 'TRUNCATE%'").trim());
            String ledger = pg.psql("SELECT count(*) || ' ' || count(DISTINCT id) FROM bench_ledger").trim();
            if (!ledger.equals(distinct + " " + distinct)) {
              throw new IllegalStateException(scenario + ": ledger rows and distinct ids " + ledger + ", expected "
                  + distinct + " each");
            }
            double perSecond = records / seconds;
            double perRecord = (double) statements / records;
            out.printf("dup %d%% round %d %-13s %8.0f records/s  %5.2f statements/record  (%d records, %d ids,"
                + " %.2f s)%n", percent, round, scenario, perSecond, perRecord, records, distinct, seconds);
            if (round > 1) {
              results.computeIfAbsent(scenario, s -> new ArrayList<>()).add(new double[] {perSecond, perRecord});
            }
          }
        }
        double inbox = median(results.get("inbox"), 0);
        double plain = median(results.get("plain-inbox"), 0);
        double effect = median(results.get("effect-first"), 0);
        out.printf("SUMMARY dup %d%%: inbox %.0f/s (%.2f statements/record), plain inbox %.0f/s (%.2f),"
            + " effect-first %.0f/s (%.2f); inbox / plain inbox = %.2fx, inbox / effect-first = %.2fx%n", percent,
            inbox, median(results.get("inbox"), 1), plain, median(results.get("plain-inbox"), 1), effect,
            median(results.get("effect-first"), 1), inbox / plain, inbox / effect);
      }
    }
    System.exit(0);
  }

  private static double median(List<double[]> xs, int field) {
    if (xs == null || xs.isEmpty()) {
      return Double.NaN;
    }
    List<Double> v = new ArrayList<>();
    for (double[] x : xs) {
      v.add(x[field]);
    }
    v.sort(Double::compare);
    int n = v.size();
    return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
  }

  /** Publishes the records: new ids, and {@code percent} % copies of a recent id (same key, same partition). */
  private static int publish(String servers, String topic, int partitions, int records, int percent)
      throws Exception {
    LocalKafka.createTopic(servers, topic, partitions);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    SplittableRandom random = new SplittableRandom(17);
    int distinct = 0;
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
        new StringSerializer())) {
      for (int i = 0; i < records; i++) {
        String id = distinct > 0 && random.nextInt(100) < percent
            ? "id-" + (distinct - 1 - random.nextInt(Math.min(distinct, 1000))) : "id-" + distinct++;
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, id, "v");
        r.headers().add("message-id", id.getBytes(StandardCharsets.UTF_8));
        producer.send(r);
      }
      producer.flush();
    }
    return distinct;
  }

  private static Map<String, String> config(String servers, String group) {
    Map<String, String> c = new HashMap<>();
    c.put("bootstrap.servers", servers);
    c.put("group.id", group);
    c.put("auto.offset.reset", "earliest");
    c.put("enable.auto.commit", "false");
    c.put("max.poll.records", "1000");
    c.put("key.deserializer", StringDeserializer.class.getName());
    c.put("value.deserializer", StringDeserializer.class.getName());
    return c;
  }

  private static Pool pool(Vertx vertx, LocalPostgres pg, int size) {
    return PgBuilder.pool().with(new PoolOptions().setMaxSize(size)).connectingTo(new PgConnectOptions()
        .setHost(pg.host()).setPort(pg.port()).setDatabase(LocalPostgres.DATABASE).setUser(LocalPostgres.USER))
        .using(vertx).build();
  }

  private static void run(String scenario, String servers, LocalPostgres pg, String topic, String group,
      int records, int partitions) throws Exception {
    Vertx vertx = Vertx.vertx();
    Pool pool = pool(vertx, pg, partitions + 2);
    DedupInbox inbox = DedupInbox.create(vertx, pool, new DedupInboxOptions().setTable("bench_inbox"));
    try {
      if (scenario.equals("plain-inbox")) {
        plainInbox(servers, group, topic, records, inbox);
        return;
      }
      boolean inboxMode = scenario.equals("inbox");
      DedupKafkaOptions options = new DedupKafkaOptions()
          .setDedup(new DedupOptions().setWindow(Duration.ofMinutes(10)))
          .setMode(inboxMode ? AtomicityMode.INBOX : AtomicityMode.EFFECT_FIRST)
          .setCommitIntervalMs(20)
          .setPollTimeoutMs(20);
      DedupKafkaConsumer<String, String> c = DedupKafkaConsumer.<String, String>create(vertx,
              config(servers, group), options)
          .identity(IdentityExtractor.header("message-id"));
      String insert = "INSERT INTO bench_ledger VALUES ($1)";
      if (inboxMode) {
        c.inbox(inbox, (r, conn) -> conn.preparedQuery(insert).execute(Tuple.of(r.key())).mapEmpty());
      } else {
        c.handler(r -> pool.preparedQuery(insert).execute(Tuple.of(r.key())).mapEmpty());
      }
      c.subscribe(topic).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      awaitCommitted(servers, group, topic, records);
      c.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } finally {
      pool.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * The plain inbox: every record to the database. A native consumer on this thread; a poll's partitions run in
   * parallel on the Vert.x pool's connections, one record at a time per partition; then the offsets are committed.
   */
  private static void plainInbox(String servers, String group, String topic, int records, DedupInbox inbox) {
    Map<String, Object> config = new HashMap<>(config(servers, group));
    long done = 0;
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(config)) {
      c.subscribe(List.of(topic));
      AtomicBoolean failed = new AtomicBoolean();
      while (done < records) {
        ConsumerRecords<String, String> polled = c.poll(Duration.ofMillis(20));
        List<Future<Void>> chains = new ArrayList<>();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : polled.partitions()) {
          Future<Void> chain = Future.succeededFuture();
          for (ConsumerRecord<String, String> r : polled.records(tp)) {
            InboxEntry entry = new InboxEntry(group, tp.topic(), tp.partition(), r.key(), null, null,
                System.currentTimeMillis() + 600_000);
            chain = chain.compose(v -> inbox.execute(entry, conn -> conn.preparedQuery(
                "INSERT INTO bench_ledger VALUES ($1)").execute(Tuple.of(r.key()))).mapEmpty());
          }
          chains.add(chain);
          List<ConsumerRecord<String, String>> rs = polled.records(tp);
          offsets.put(tp, new OffsetAndMetadata(rs.get(rs.size() - 1).offset() + 1));
        }
        Future.all(chains).onFailure(e -> failed.set(true)).toCompletionStage().toCompletableFuture().join();
        if (failed.get()) {
          throw new IllegalStateException("a plain inbox transaction failed");
        }
        c.commitSync(offsets);
        done += polled.count();
      }
    }
  }

  private static void awaitCommitted(String servers, String group, String topic, long records) throws Exception {
    Properties a = new Properties();
    a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
    try (Admin admin = Admin.create(a)) {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
      while (System.nanoTime() < deadline) {
        long sum = 0;
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : admin.listConsumerGroupOffsets(group)
            .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS).entrySet()) {
          if (e.getKey().topic().equals(topic) && e.getValue() != null) {
            sum += e.getValue().offset();
          }
        }
        if (sum >= records) {
          return;
        }
        Thread.sleep(10); // polling the broker's committed offsets: real time, outside the measured code
      }
      throw new IllegalStateException(group + " did not commit " + records + " records within 5 minutes");
    }
  }
}
