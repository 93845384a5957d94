package io.github.vertxdedup.examples;

import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.DedupVerdict;
import io.github.vertxdedup.DedupVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The README's first lines of code: deploy the dedup service with a journal, then check one id twice, as a broker
 * that redelivers would. Tested by {@code QuickStartTest}; the README holds the tagged region
 * ({@code DocSnippetsTest} keeps them equal).
 */
public final class QuickStart {

  private QuickStart() {}

  /**
   * Deploys the service and checks {@code payment-42} twice.
   *
   * @param vertx the Vert.x instance
   * @param journalDir where the partitions keep their journals (one directory per partition below it)
   * @return the two verdicts: {@code ACCEPTED}, then {@code DUPLICATE}; fails if the deployment or a check fails
   */
  public static Future<List<DedupVerdict>> start(Vertx vertx, Path journalDir) {
    // tag::start[]
    DedupOptions options = new DedupOptions()
        .setWindow(Duration.ofMinutes(10))              // remember each id for 10 minutes
        .setJournalDir(journalDir.toString());          // and across a restart
    return vertx.deployVerticle(new DedupVerticle(), new DeploymentOptions().setConfig(options.toJson()))
        .compose(deployment -> {
          DedupClient dedup = DedupClient.create(vertx, options);
          return dedup.check("payment-42")                // ACCEPTED: apply the effect
              .compose(first -> dedup.check("payment-42") // DUPLICATE: a redelivered copy, drop it
                  .map(second -> List.of(first.verdict(), second.verdict())));
        });
    // end::start[]
  }
}
