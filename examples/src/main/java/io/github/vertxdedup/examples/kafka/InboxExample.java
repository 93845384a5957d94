package io.github.vertxdedup.examples.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.inbox.DedupInboxOptions;
import io.github.vertxdedup.kafka.AtomicityMode;
import io.github.vertxdedup.kafka.DeadLetter;
import io.github.vertxdedup.kafka.DedupKafkaConsumer;
import io.github.vertxdedup.kafka.DedupKafkaOptions;
import io.github.vertxdedup.kafka.IdentityExtractor;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import io.github.vertxdedup.kafka.testkit.LocalPostgres;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The billing ledger in PostgreSQL with the transactional inbox ({@link AtomicityMode#INBOX}): each payment inserts a
 * ledger entry and its inbox row in one transaction, so the credit and the record of its id commit together. The
 * window in front answers the producer's copies without a round trip; what it does not know (a copy after a crash, a
 * rewind) the inbox's unique key answers. A credit that fails rolls back with its inbox row and is retried; a reused
 * id with another payload is a {@code CONFLICT} for the dead-letter handler.
 *
 * <p>{@code main} starts a broker in-process and a private PostgreSQL cluster ({@link LocalPostgres}: the PostgreSQL
 * server binaries must be installed), publishes 1,000 payments with 20 % producer-side copies and one conflicting
 * record, makes the first credit of {@code pay-1} fail, consumes, prints the counts and exits with 1 if a payment was
 * credited twice or not at all.
 */
public final class InboxExample {

  /**
   * The ledger: one row per credit, and no unique key, so that a credit applied twice would show. Its trigger refuses
   * the first credit of {@code pay-1} (a sequence counts the tries: it is not rolled back with the transaction), so
   * the run shows a failed transaction rolled back with its inbox row and retried.
   */
  static final String LEDGER_DDL = "CREATE TABLE IF NOT EXISTS ledger_entries (payment_id text NOT NULL,"
      + " amount_cents bigint NOT NULL);"
      + " CREATE SEQUENCE IF NOT EXISTS pay1_tries;"
      + " CREATE OR REPLACE FUNCTION refuse_first_credit_of_pay1() RETURNS trigger LANGUAGE plpgsql AS $$"
      + " BEGIN IF NEW.payment_id = 'pay-1' THEN IF nextval('pay1_tries') = 1 THEN"
      + " RAISE EXCEPTION 'the ledger refused the credit of pay-1'; END IF; END IF; RETURN NEW; END $$;"
      + " DROP TRIGGER IF EXISTS refuse_first_credit_of_pay1 ON ledger_entries;"
      + " CREATE TRIGGER refuse_first_credit_of_pay1 BEFORE INSERT ON ledger_entries FOR EACH ROW"
      + " EXECUTE FUNCTION refuse_first_credit_of_pay1()";

  private InboxExample() {}

  /**
   * Builds the consumer (not yet subscribed).
   *
   * @param vertx the Vert.x instance
   * @param kafkaConfig {@code bootstrap.servers}, {@code group.id}, the deserializers
   * @param pool the application's PostgreSQL pool
   * @param deadLetters where dead letters go (a real application produces them to a dead-letter topic)
   * @return the consumer
   */
  public static DedupKafkaConsumer<String, String> create(Vertx vertx, Map<String, String> kafkaConfig, Pool pool,
      List<DeadLetter<String, String>> deadLetters) {
    // tag::inbox[]
    DedupInbox inbox = DedupInbox.create(vertx, pool, new DedupInboxOptions()
        .setTable("payment_inbox")                    // created by inbox.createSchema(), only when asked
        .setPurgeInterval(Duration.ofMinutes(1)));    // expired rows deleted in bounded batches
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions()
            .setWindow(Duration.ofMinutes(10))            // W: the window and each inbox row's life
            .setPayloadHashes(true))
        .setMode(AtomicityMode.INBOX)                     // the window filters, the transaction decides
        .setMaxAttempts(5);                               // a failed transaction: retried, then dead-lettered
    return DedupKafkaConsumer.<String, String>create(vertx, kafkaConfig, options)
        .identity(IdentityExtractor.<String, String>header("message-id")
            .withPayloadHash(record -> Payments.sha256(record.value())))  // same id, other payload: CONFLICT
        .inbox(inbox, (record, connection) -> {           // in the transaction that holds the inbox row
          JsonObject payment = new JsonObject(record.value());  // a failure rolls back the row too, and is retried
          return connection.preparedQuery("INSERT INTO ledger_entries (payment_id, amount_cents) VALUES ($1, $2)")
              .execute(Tuple.of(payment.getString("paymentId"), payment.getLong("amountCents")))
              .mapEmpty();
        })
        .deadLetterHandler(dead -> {                      // CONFLICT, NO_IDENTITY, HANDLER_FAILED, ...
          deadLetters.add(dead);
          return Future.succeededFuture();
        });
    // end::inbox[]
  }

  /**
   * Creates the inbox table and the ledger ({@link #LEDGER_DDL}, whose trigger refuses the first credit of
   * {@code pay-1}), publishes payments with producer-side copies and one conflicting record, consumes with {@link #create} and counts the ledger's entries.
   *
   * @param bootstrapServers the cluster
   * @param pg the database server
   * @param topic the topic (created with 3 partitions if missing)
   * @param group the consumer group
   * @param deadLetters receives the dead letters
   * @param payments payments to publish, at least 2
   * @param duplicateRate share of payments the producer sends twice
   * @return the counts
   * @throws Exception if the broker or the database fails, or the group has not consumed the topic within 2 minutes
   */
  public static RunSummary run(String bootstrapServers, LocalPostgres pg, String topic, String group,
      List<DeadLetter<String, String>> deadLetters, int payments, double duplicateRate) throws Exception {
    Vertx setup = Vertx.vertx();
    Pool setupPool = pool(setup, pg);
    try {
      DedupInbox.create(setup, setupPool, new DedupInboxOptions().setTable("payment_inbox")).createSchema()
          .compose(v -> setupPool.query(LEDGER_DDL).execute()).await();
    } finally {
      setupPool.close().await();
      setup.close().await();
    }
    LocalKafka.createTopic(bootstrapServers, topic, 3);
    Payments.Published published = Payments.publish(bootstrapServers, topic, payments, duplicateRate, 11);
    Payments.publishConflict(bootstrapServers, topic, "pay-0", 999_999);
    return ConsumerRun.consume(bootstrapServers, topic, group, published.records() + 1, published.distinctIds(),
        () -> credits(pg).size(), () -> repeated(credits(pg)), deadLetters::size,
        (vertx, config) -> create(vertx, config, pool(vertx, pg), deadLetters));
  }

  /** @return ledger entries per payment id, read through {@code psql} */
  static Map<String, Integer> credits(LocalPostgres pg) {
    Map<String, Integer> m = new HashMap<>();
    String out = pg.psql("SELECT payment_id, count(*) FROM ledger_entries GROUP BY payment_id").trim();
    if (!out.isEmpty()) {
      for (String line : out.split("\n")) {
        String[] f = line.split("\\|");
        m.put(f[0], Integer.parseInt(f[1]));
      }
    }
    return m;
  }

  private static Map<String, Integer> repeated(Map<String, Integer> credits) {
    Map<String, Integer> m = new HashMap<>();
    credits.forEach((id, n) -> {
      if (n > 1) {
        m.put(id, n);
      }
    });
    return m;
  }

  /**
   * @param vertx the Vert.x instance
   * @param pg the server
   * @return a pool of up to 4 connections to it (an application builds its own from its configuration)
   */
  static Pool pool(Vertx vertx, LocalPostgres pg) {
    return PgBuilder.pool().connectingTo(new PgConnectOptions().setHost(pg.host()).setPort(pg.port())
        .setDatabase(LocalPostgres.DATABASE).setUser(LocalPostgres.USER)).using(vertx).build();
  }

  /**
   * Runs the example once with an in-process broker and a private PostgreSQL cluster; exits with 0 if every payment
   * was credited exactly once, 1 if not, 2 on a bad argument ({@code --help} and {@code --version} only).
   *
   * @param args {@code --help} or nothing
   */
  public static void main(String[] args) {
    @picocli.CommandLine.Command(name = "inbox", mixinStandardHelpOptions = true,
        description = "A Kafka consumer in inbox mode: starts a broker and a private PostgreSQL cluster (the server"
            + " binaries must be installed), publishes 1,000 payments with 20 %% producer copies and one conflicting"
            + " record, makes the first credit of pay-1 fail, and counts the ledger's credits.")
    class Command implements java.util.concurrent.Callable<Integer> {
      @Override
      public Integer call() throws Exception {
        List<DeadLetter<String, String>> deadLetters = new CopyOnWriteArrayList<>();
        RunSummary summary;
        String pay1Tries;
        try (LocalKafka kafka = LocalKafka.start(3); LocalPostgres pg = LocalPostgres.start()) {
          summary = run(kafka.bootstrapServers(), pg, "payment.succeeded", "ledger-inbox", deadLetters, 1000, 0.2);
          pay1Tries = pg.psql("SELECT last_value FROM pay1_tries").trim();
        }
        System.out.println("inbox: " + summary);
        System.out.println("pay-1: " + pay1Tries + " transactions, the first refused by the ledger and rolled back"
            + " with its inbox row, then retried");
        deadLetters.forEach(d -> System.out.println("dead letter: " + d.reason() + " " + d.detail()));
        return summary.exactlyOnce() ? 0 : 1;
      }
    }
    System.exit(new picocli.CommandLine(new Command()).execute(args));
  }
}
