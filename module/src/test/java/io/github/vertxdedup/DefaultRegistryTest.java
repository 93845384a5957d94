package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.vertxdedup.time.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import org.junit.jupiter.api.Test;

/** Without an explicit registry the meters go to the registry of vertx-micrometer-metrics. */
class DefaultRegistryTest {

  @Test
  void shouldRegisterMetersInTheVertxMicrometerRegistry() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Vertx vertx = Vertx.builder()
        .with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)))
        .withMetrics(new MicrometerMetricsFactory(registry))
        .build();
    try {
      DedupOptions options = new DedupOptions().setWindowMs(60_000);
      ServiceTestSupport.await(vertx.deployVerticle(new DedupVerticle(new ManualClock(0)),
          new DeploymentOptions().setConfig(options.toJson())));
      DedupClient client = DedupClient.create(vertx, options);
      assertThat(ServiceTestSupport.await(client.check("a")).verdict()).isEqualTo(DedupVerdict.ACCEPTED);
      ServiceTestSupport.await(client.stats(0));
      assertThat(registry.get("dedup.verdicts").tags("verdict", "accepted", "partition", "0").functionCounter()
          .count()).isEqualTo(1);
    } finally {
      ServiceTestSupport.await(vertx.close());
    }
  }
}
