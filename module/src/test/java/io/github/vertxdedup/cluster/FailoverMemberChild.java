package io.github.vertxdedup.cluster;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerticle;
import io.github.vertxdedup.kafka.testkit.LoopbackCluster;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import java.io.InputStream;
import java.util.concurrent.TimeUnit;

/**
 * The member {@link ClusterFailoverTest} kills with SIGKILL: joins a loopback cluster ({@link LoopbackCluster}),
 * deploys the event-bus service ({@link DedupVerticle}) with the options of its arguments, and prints
 * {@code deployed <deploymentId>} once the deployment has started (as the owner of every partition when it is the
 * first deployment of its address in the cluster, as their standby otherwise: {@code stats} names the owner by that
 * id). Runs until its standard input ends or it is killed.
 */
public final class FailoverMemberChild {

  private FailoverMemberChild() {}

  /**
   * The service's options from the arguments.
   *
   * @param args address, partitions, windowMs, ownerLeaseMs, ownerCheckMs, ownerLockPollMs, journal directory or
   *     {@code -} for none
   * @return the options
   * @throws NumberFormatException if a number argument is not one
   */
  static DedupOptions options(String[] args) {
    DedupOptions options = new DedupOptions().setAddress(args[0]).setPartitions(Integer.parseInt(args[1]))
        .setWindowMs(Long.parseLong(args[2])).setBucketMs(100).setOwnerLeaseMs(Long.parseLong(args[3]))
        .setOwnerCheckMs(Long.parseLong(args[4])).setOwnerLockPollMs(Long.parseLong(args[5]));
    if (!"-".equals(args[6])) {
      options.setJournalDir(args[6]);
    }
    return options;
  }

  /**
   * Runs the child.
   *
   * @param args cluster name, then the arguments of {@link #options}
   * @throws Exception on any failure (the driver sees the exit code and the standard error)
   */
  public static void main(String[] args) throws Exception {
    Vertx vertx = LoopbackCluster.member(args[0]).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
    String id = vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions().setConfig(options(rest).toJson()))
        .toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    System.out.println("deployed " + id);
    System.out.flush();
    InputStream in = System.in;
    while (in.read() >= 0) {
      // wait for the driver to close our input
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
