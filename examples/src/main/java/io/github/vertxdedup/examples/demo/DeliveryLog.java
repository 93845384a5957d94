package io.github.vertxdedup.examples.demo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The consumer's log of the records it receives, one line {@code <partition> <offset> <paymentId>} per delivery, so
 * that the demo can count deliveries and tell a redelivery after the crash (an offset an earlier run received) from a
 * producer retry (a record of its own, re-publishing an id). It is written from the identity extractor, which runs on
 * the partition's event loop and must not block: {@link #log} only queues the line; a thread of its own writes what
 * is queued with one {@code write(2)} per batch. A SIGKILL loses what was queued and not yet written (the last few
 * microseconds of deliveries); {@link #close} writes everything.
 *
 * <p>Thread-safe.
 */
final class DeliveryLog implements AutoCloseable {

  private static final String STOP = "";

  private final LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
  private final FileChannel channel;
  private final Thread writer;
  private volatile IOException failure;

  /**
   * Opens (creating or appending to) the log and starts its writer thread.
   *
   * @param file the log file
   * @throws IOException if it cannot be opened
   */
  DeliveryLog(Path file) throws IOException {
    channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    writer = new Thread(this::drain, "delivery-log");
    writer.setDaemon(true);
    writer.start();
  }

  /**
   * Queues one delivery. Non-blocking.
   *
   * @param partition the record's partition
   * @param offset the record's offset
   * @param paymentId its identity
   */
  void log(int partition, long offset, String paymentId) {
    queue.add(partition + " " + offset + " " + paymentId + "\n");
  }

  /**
   * Writes what is queued and stops the writer.
   *
   * @throws IOException if a write failed
   * @throws InterruptedException if interrupted while waiting for the writer
   */
  @Override
  public void close() throws IOException, InterruptedException {
    queue.add(STOP);
    writer.join(TimeUnit.SECONDS.toMillis(30));
    channel.close();
    if (failure != null) {
      throw failure;
    }
  }

  private void drain() {
    List<String> batch = new ArrayList<>();
    try {
      while (true) {
        batch.add(queue.take());
        queue.drainTo(batch);
        boolean stop = batch.remove(STOP);
        StringBuilder text = new StringBuilder();
        batch.forEach(text::append);
        ByteBuffer buf = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8));
        while (buf.hasRemaining()) {
          channel.write(buf);
        }
        batch.clear();
        if (stop) {
          return;
        }
      }
    } catch (IOException e) {
      failure = e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
