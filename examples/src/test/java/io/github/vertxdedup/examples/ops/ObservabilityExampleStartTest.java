package io.github.vertxdedup.examples.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.kafka.testkit.LocalKafkaExtension;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@link ObservabilityExample#start} on a port another process holds: its future fails, naming why. */
class ObservabilityExampleStartTest {

  @RegisterExtension
  static final LocalKafkaExtension kafka = new LocalKafkaExtension(1);

  @Test
  void shouldFailItsFutureWhenThePortIsInUse(@TempDir Path journalDir) throws Exception {
    kafka.createTopic(ObservabilityExample.TOPIC, 3);
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("0.0.0.0"))) {
      assertThatThrownBy(() -> ObservabilityExample.start(kafka.bootstrapServers(), taken.getLocalPort(), journalDir)
          .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .satisfies(e -> assertThat(e.getCause().getMessage()).containsIgnoringCase("address already in use"));
    }
  }
}
