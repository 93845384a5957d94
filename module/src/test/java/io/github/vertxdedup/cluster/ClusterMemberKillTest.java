package io.github.vertxdedup.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.core.Hazelcast;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupFailure;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupResult;
import io.github.vertxdedup.TestFutures;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.github.vertxdedup.testing.ChildJvm;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the member that holds a request: the owner of a partition address runs in a child JVM (a consumer that
 * takes the request and never answers), the client in this JVM; the child is killed with SIGKILL while the request
 * is in flight. The Vert.x event bus does not fail a pending reply when the member that holds it leaves, so the
 * client's request timeout bounds the wait: the request fails with {@link DedupFailure#OUTCOME_UNKNOWN} no later
 * than that, and is not sent again. A request sent just after the kill fails within its timeout too: 504 if it was
 * sent to the dead member before the cluster noticed, 503 if the registration was gone and no owner came back. Real
 * time: a process boundary and the cluster's failure detection.
 */
class ClusterMemberKillTest {

  private static final long REQUEST_TIMEOUT_MS = 5_000;
  /** Slack for timers on a busy machine. */
  private static final long SLACK_MS = 2_000;

  @TempDir
  Path tmp;

  @Test
  void shouldFailARequestInFlightToAKilledMemberWithOutcomeUnknownWithinTheRequestTimeout() throws Exception {
    String cluster = LoopbackCluster.newClusterName();
    Vertx member = TestFutures.await(LoopbackCluster.member(cluster), 60);
    Process child = null;
    try {
      Path stderr = tmp.resolve("child.err");
      child = childCommand(cluster, "doomed.0").redirectError(stderr.toFile()).start();
      BlockingQueue<String> lines = ChildLines.of(child);
      assertThat(lines.poll(120, TimeUnit.SECONDS)).as("child ready (its stderr: %s)", stderr).isEqualTo("ready");

      // A first message opens this member's event-bus connection to the child (and waits until this member sees the
      // child's registration), so that the request under test reaches the child at once.
      long warmupUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String warm = null;
      while (!"arrived warmup".equals(warm) && System.nanoTime() < warmupUntil) {
        member.eventBus().send("doomed.0", new JsonObject().put("id", "warmup"));
        warm = lines.poll(2, TimeUnit.SECONDS);
      }
      assertThat(warm).as("the child's consumer is reachable").isEqualTo("arrived warmup");
      lines.removeIf("arrived warmup"::equals);

      DedupClient client = DedupClient.create(member, new DedupOptions().setAddress("doomed").setWindowMs(60_000)
          .setRequestTimeoutMs(REQUEST_TIMEOUT_MS));
      long sentNanos = System.nanoTime();
      Future<DedupResult> inFlight = client.check("in-flight");
      String arrived;
      do {
        arrived = lines.poll(REQUEST_TIMEOUT_MS, TimeUnit.MILLISECONDS);
      } while ("arrived warmup".equals(arrived));
      assertThat(arrived).as("the child took the request: %s", Files.readString(stderr)).isEqualTo("arrived in-flight");
      child.destroyForcibly();
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
      long afterKillNanos = System.nanoTime();
      Future<DedupResult> afterKill = client.check("after-kill");

      ReplyException e = TestFutures.replyFailure(inFlight, 30);
      long failedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentNanos);
      assertThat(e.failureCode()).as(e.getMessage()).isEqualTo(DedupFailure.OUTCOME_UNKNOWN);
      assertThat(e.failureType()).isEqualTo(ReplyFailure.TIMEOUT);
      assertThat(failedMs).as("failed by the request timeout").isLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);

      ReplyException late = TestFutures.replyFailure(afterKill, 30);
      long lateMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - afterKillNanos);
      assertThat(late.failureCode()).as(late.getMessage())
          .isIn(DedupFailure.OUTCOME_UNKNOWN, DedupFailure.UNAVAILABLE);
      assertThat(lateMs).as("failed by the request timeout").isLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
      assertThat(lines).as("the request was taken once and not sent again").doesNotContain("arrived in-flight");
      System.out.println("kill test: in-flight request failed after " + failedMs + " ms (" + e.getMessage()
          + "); the one sent after the kill after " + lateMs + " ms with " + late.failureCode());
    } finally {
      if (child != null) {
        child.destroyForcibly();
      }
      TestFutures.await(member.close(), 60);
    }
  }

  /**
   * The child: {@link SilentMemberChild} on the production classpath ({@link ChildJvm}) plus what a clustered
   * application adds, the Hazelcast cluster manager and the loopback set-up of the test kit.
   */
  private ProcessBuilder childCommand(String cluster, String address) throws Exception {
    ProcessBuilder pb = ChildJvm.of(SilentMemberChild.class, tmp).command(List.of(), List.of(cluster, address));
    List<String> cmd = pb.command();
    int cp = cmd.indexOf("-cp") + 1;
    cmd.set(cp, cmd.get(cp) + File.pathSeparator + String.join(File.pathSeparator, location(Hazelcast.class),
        location(HazelcastClusterManager.class), location(LoopbackCluster.class)));
    return pb;
  }

  private static String location(Class<?> c) throws URISyntaxException {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
  }
}
