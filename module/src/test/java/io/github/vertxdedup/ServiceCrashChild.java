package io.github.vertxdedup;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The process {@link ServiceCrashTest} kills. Started with the production classpath only (this module, the
 * persistence module, Vert.x, Chronicle; no JUnit), it deploys a {@link DedupVerticle} with a {@code journalDir},
 * then reads ids from standard input, one per line, sends each as a {@code check} over its local event bus, and
 * prints the verdict of each reply. It uses real time (a process boundary: no clock can be injected) with a ten-minute
 * window.
 *
 * <p>Output: {@code ready deployMs=D processMs=P} once the service answers (deployment time; JVM start to ready),
 * then {@code <id> <verdict>;} per reply ({@code <id> ERR<code>;} for a failure; the {@code ;} tells a whole line
 * from one cut by the kill), and {@code done} after standard input ended and every reply was printed.
 */
public final class ServiceCrashChild {

  /** Requests in flight at most; the reader waits beyond that. */
  private static final int IN_FLIGHT = 256;

  private ServiceCrashChild() {
  }

  /**
   * Runs the child.
   *
   * @param args journal directory
   * @throws Exception on any failure (the driver sees the exit code and the standard error)
   */
  public static void main(String[] args) throws Exception {
    long jvmStartMs = ManagementFactory.getRuntimeMXBean().getStartTime();
    Vertx vertx = Vertx.vertx();
    // Window snapshots every 1,000 entries or so, so that kills land before, during and after snapshots and each
    // restart loads one and replays the journal after it.
    DedupOptions options = new DedupOptions().setWindowMs(600_000).setPartitions(2).setJournalDir(args[0])
        .setJournalSnapshotEntries(1_000);
    long deployStart = System.nanoTime();
    vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions().setConfig(options.toJson()))
        .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    long deployMs = (System.nanoTime() - deployStart) / 1_000_000;

    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    print(out, "ready deployMs=" + deployMs + " processMs=" + (System.currentTimeMillis() - jvmStartMs));
    Semaphore permits = new Semaphore(IN_FLIGHT);
    DeliveryOptions check = new DeliveryOptions().addHeader(DedupAction.HEADER, "check");
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String id;
      while ((id = in.readLine()) != null) {
        if (id.isEmpty()) {
          continue;
        }
        permits.acquire();
        String sent = id;
        vertx.eventBus().request("dedup", new JsonObject().put("id", sent), check).onComplete(ar -> {
          String verdict = ar.succeeded()
              ? ((JsonObject) ar.result().body()).getString("verdict")
              : "ERR" + (ar.cause() instanceof ReplyException re ? re.failureCode() : -1);
          print(out, sent + " " + verdict + ";");
          permits.release();
        });
      }
    }
    permits.acquire(IN_FLIGHT);
    print(out, "done");
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static void print(BufferedWriter out, String line) {
    synchronized (out) {
      try {
        out.write(line);
        out.newLine();
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
