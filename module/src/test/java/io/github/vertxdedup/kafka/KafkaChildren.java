package io.github.vertxdedup.kafka;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The test JVM's side of the tests whose consumers run in child JVMs ({@link KafkaCrashTest},
 * {@link KafkaMachineLossTest}): the producer that feeds them, their ledgers read from outside the process, and
 * their last stop. These tests cross a process boundary, so they use real time. Static helpers; the
 * {@link Producer} is safe to read from the test thread while it runs.
 */
final class KafkaChildren {

  private KafkaChildren() {
  }

  /**
   * Stops a child with SIGTERM: it closes its consumer, whose drain runs the handlers of the records whose offsets it
   * committed (record-first commits a run's offsets before its handlers run); SIGKILL if it does not end within 30 s.
   */
  static void stop(Process p) throws InterruptedException {
    p.destroy();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /**
   * @return the whole lines of a child's ledger, in order (a line cut by a kill has no newline and is not an effect);
   *     none if the child has not created it yet
   */
  static List<String> wholeLines(Path ledger) throws IOException {
    if (!Files.exists(ledger)) {
      return List.of();
    }
    String text = Files.readString(ledger, StandardCharsets.UTF_8);
    int end = text.lastIndexOf('\n');
    if (end < 0) {
      return List.of();
    }
    return List.of(text.substring(0, end).split("\n"));
  }

  /**
   * Publishes up to 300 records a second (three, a flush, a 10 ms pause) through the broker's producer until
   * stopped: new ids, and every tenth record a copy of an earlier one (keyed by its id, so the copy lands on the same
   * partition).
   */
  static final class Producer {
    /** Every id sent, in order, copies included. */
    final List<String> sent = Collections.synchronizedList(new ArrayList<>());
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;
    private final KafkaTestSupport broker;
    private final long startNanos = System.nanoTime();
    private volatile long stopNanos;

    /** Starts publishing to {@code topic} on a daemon thread named {@code threadName}. */
    Producer(KafkaTestSupport broker, String topic, long seed, String threadName) {
      this.broker = broker;
      Random random = new Random(seed);
      thread = new Thread(() -> {
        long n = 0;
        while (running.get()) {
          for (int i = 0; i < 3; i++, n++) {
            String id = n % 10 == 9 ? sent.get(random.nextInt(sent.size())) : "id-" + n;
            broker.send(topic, id, "v");
            sent.add(id);
          }
          broker.flush();
          try {
            Thread.sleep(10); // the producer's pace: real time across processes
          } catch (InterruptedException e) {
            return;
          }
        }
      }, threadName);
      thread.setDaemon(true);
      thread.start();
    }

    /** Stops publishing (within 30 s) and flushes what was sent. */
    void stop() throws InterruptedException {
      running.set(false);
      thread.join(30_000);
      stopNanos = System.nanoTime();
      broker.flush();
    }

    /** @return records sent per second, over the producer's life; after {@link #stop} */
    double ratePerSecond() {
      return sent.size() * 1e9 / (stopNanos - startNanos);
    }
  }
}
