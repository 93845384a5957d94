package io.github.vertxdedup.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The consumer JVM does not outlive its driver: once its standard input ends without a {@code stop} line (what a
 * SIGKILL of the driver does to the pipe), it halts at once with exit code 4. Its broker address answers nothing, so
 * without the watch it would stay up, waiting for its subscription, for a minute.
 */
class ConsumerProcessTest {

  @TempDir
  Path dir;

  @Test
  void haltsWhenItsDriverGoesAway() throws Exception {
    ConsumerProcess c = ConsumerProcess.start(1, dir, List.of("--bootstrap-servers", "localhost:1", "--topic",
        "payment.succeeded", "--group", "g", "--work-dir", dir.toString(), "--run", "1", "--mode", "EFFECT_FIRST",
        "--window-ms", "600000"));
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (c.startedAtMs < 0 && c.process.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(c.startedAtMs).as("the consumer said 'started'; stderr: %s", c.errTail(20)).isPositive();
      assertThat(c.process.isAlive()).isTrue();

      c.process.getOutputStream().close(); // as when the driver's JVM dies

      assertThat(c.process.waitFor(20, TimeUnit.SECONDS)).as("exited within 20 s").isTrue();
      assertThat(c.process.exitValue()).isEqualTo(BillingConsumer.EXIT_DRIVER_GONE);
      assertThat(Files.readString(c.errFile)).contains("the driver is gone");
    } finally {
      c.process.destroyForcibly();
    }
  }
}
