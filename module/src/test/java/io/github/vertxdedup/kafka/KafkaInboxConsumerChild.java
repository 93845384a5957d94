package io.github.vertxdedup.kafka;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.inbox.DedupInbox;
import io.github.vertxdedup.inbox.DedupInboxOptions;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.Map;

/**
 * A consumer "machine" in {@link AtomicityMode#INBOX}, in a JVM of its own, which {@link KafkaInboxCrashTest} kills
 * with SIGKILL. Started on the production classpath only (this module with its optional PostgreSQL client, Vert.x,
 * the Kafka client; no JUnit). No journal: each start rebuilds its windows from the inbox rows committed by then; a
 * copy whose row was not committed yet (a transaction a killed child left in the server) is decided by the inbox's
 * unique key. Static membership and a 6 s session timeout, as {@link KafkaConsumerChild}.
 *
 * <p>The effect of a record is one row {@code (event_id, kafka_partition, kafka_offset)} inserted into the ledger
 * table in the inbox's transaction; the ledger has no unique key, so an effect applied twice shows as two rows.
 * Output: {@code subscribed} once the consumer joined, then {@code effects N} every 100 effects.
 *
 * <p>Arguments: bootstrap servers, topic, group id, instance id, PostgreSQL host, port, inbox table, ledger table.
 */
public final class KafkaInboxConsumerChild {

  private KafkaInboxConsumerChild() {
  }

  /**
   * Runs the child until it is killed.
   *
   * @param args see the type's javadoc
   * @throws Exception on any failure (the driver sees the exit code and the standard error)
   */
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    String group = args[2];
    String instanceId = args[3];
    String pgHost = args[4];
    int pgPort = Integer.parseInt(args[5]);
    String table = args[6];
    String ledger = args[7];
    ChildConsole console = new ChildConsole(System.out);

    Vertx vertx = Vertx.vertx();
    Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(4))
        .connectingTo(new PgConnectOptions().setHost(pgHost).setPort(pgPort).setDatabase("postgres")
            .setUser("postgres"))
        .using(vertx).build();
    DedupInbox inbox = DedupInbox.create(vertx, pool, new DedupInboxOptions().setTable(table));
    Map<String, String> config = ChildConsole.memberConfig(bootstrap, group, instanceId);
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setWindow(Duration.ofMinutes(10)).setLeaseMs(2_000).setMaxBatch(50))
        .setMode(AtomicityMode.INBOX)
        .setMaxAttempts(1000)
        .setBackoffMaxMs(500)
        .setCommitIntervalMs(200)
        .setPollTimeoutMs(20);
    String insert = "INSERT INTO " + ledger + " VALUES ($1, $2, $3)";
    DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>create(vertx, config, options)
        .identity(IdentityExtractor.header("message-id"))
        .inbox(inbox, (record, conn) -> conn.preparedQuery(insert)
            .execute(Tuple.of(record.key(), record.partition(), record.offset())).map(rows -> {
              console.effect();
              return null;
            }))
        .deadLetterHandler(console.deadLetters());
    console.runUntilKilled(consumer, topic);
  }
}
