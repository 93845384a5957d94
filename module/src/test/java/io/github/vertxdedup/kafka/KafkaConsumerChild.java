package io.github.vertxdedup.kafka;

import io.github.vertxdedup.DedupOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;

/**
 * A consumer "machine" in a JVM of its own, the process {@link KafkaCrashTest} kills with SIGKILL and
 * {@link KafkaMachineLossTest} kills or stops. Started on the production classpath only (this module, the persistence
 * module, Vert.x, the Kafka client, Chronicle; no JUnit), it runs one journaled {@link DedupKafkaConsumer} with
 * static membership ({@code group.instance.id}, so that its restart takes its partitions back at once), a 6 s session
 * timeout (the broker's minimum, so that the group gives a killed or stopped machine's partitions to another member
 * 6 s after it fell silent), a {@code journalDir} no other machine shares and a ten-minute window in real time (a
 * process boundary: no clock can be injected), and a 2 s claim lease by default, so that the claims a killed child
 * left open lapse soon.
 *
 * <p>The effect of a record is one line {@code <id> <partition> <offset>} appended to the ledger file with one
 * {@code write(2)} per record before the handler's future completes: the kernel holds it once written, so neither a
 * SIGKILL nor a SIGSTOP takes it back, and the test reads it outside the process. Output: {@code subscribed} once
 * the consumer joined, then {@code effects N} every 100 effects; the library's log lines (assignments and the offsets
 * read from, refused commits, released claims) on standard error.
 *
 * <p>Arguments: bootstrap servers, topic, group id, instance id, journal directory, mode
 * ({@link AtomicityMode}), ledger file, and optionally the claim lease in milliseconds (default 2000) and an id to
 * hold: the handler of a record with that id prints {@code holding <id>} and never completes, so a kill leaves its
 * claim open in the journal (an orphaned claim).
 */
public final class KafkaConsumerChild {

  /**
   * The decision batch ({@code maxBatch}) of the child: record-first loses at most
   * {@code maxUnansweredOffsetCommits} runs of it per partition per kill (the records checked but not yet handled), so
   * a small batch makes the tests' bound on losses tight.
   */
  static final int MAX_BATCH = 50;

  /**
   * What record-first may lose per partition per kill: the runs checked and not handled, at most the default
   * {@code maxUnansweredOffsetCommits} (the child keeps it) runs of {@link #MAX_BATCH} records.
   */
  static final int RECORD_FIRST_LOSS_BOUND = DedupKafkaOptions.DEFAULT_MAX_UNANSWERED_OFFSET_COMMITS * MAX_BATCH;

  /** The child's {@code commitIntervalMs}: effect-first repeats across a machine loss what settles within it. */
  static final long COMMIT_INTERVAL_MS = 200;

  private KafkaConsumerChild() {
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
    String journalDir = args[4];
    AtomicityMode mode = AtomicityMode.valueOf(args[5]);
    Path ledgerFile = Path.of(args[6]);
    long leaseMs = args.length > 7 ? Long.parseLong(args[7]) : 2_000;
    String holdId = args.length > 8 ? args[8] : null;
    ChildConsole console = new ChildConsole(System.out);

    FileChannel ledger = FileChannel.open(ledgerFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND);
    Vertx vertx = Vertx.vertx();
    Map<String, String> config = ChildConsole.memberConfig(bootstrap, group, instanceId);
    DedupKafkaOptions options = new DedupKafkaOptions()
        .setDedup(new DedupOptions().setWindow(Duration.ofMinutes(10)).setLeaseMs(leaseMs).setJournalDir(journalDir)
            .setMaxBatch(MAX_BATCH))
        .setMode(mode)
        .setCommitIntervalMs(COMMIT_INTERVAL_MS)
        .setPollTimeoutMs(20);
    DedupKafkaConsumer<String, String> consumer = DedupKafkaConsumer.<String, String>create(vertx, config, options)
        .identity(IdentityExtractor.header("message-id"))
        .handler(record -> {
          if (record.key().equals(holdId)) {
            console.line("holding " + holdId);
            return Promise.<Void>promise().future(); // never completes: the claim stays open until the kill
          }
          byte[] line = (record.key() + " " + record.partition() + " " + record.offset() + "\n")
              .getBytes(StandardCharsets.UTF_8);
          // The write is a blocking call: off the event loop, in order per partition (ordered on its context).
          return vertx.<Void>executeBlocking(() -> {
            ByteBuffer buf = ByteBuffer.wrap(line);
            while (buf.hasRemaining()) {
              ledger.write(buf);
            }
            console.effect();
            return null;
          }, true);
        })
        .deadLetterHandler(console.deadLetters());
    console.runUntilKilled(consumer, topic);
  }
}
