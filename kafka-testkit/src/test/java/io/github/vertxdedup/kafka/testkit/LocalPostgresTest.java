package io.github.vertxdedup.kafka.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LocalPostgresTest {

  @Test
  void shouldKeepCommittedDataAcrossStopAndStartThenRemoveEverythingOnClose() throws Exception {
    Path dir;
    int port;
    try (LocalPostgres pg = LocalPostgres.start()) {
      port = pg.port();
      assertThat(pg.psql("SELECT current_setting('server_version_num')::int >= 150000").trim()).isEqualTo("t");
      pg.psql("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)");
      dir = Path.of(pg.psql("SHOW data_directory").trim()).getParent();
      assertThat(accepts(port)).isTrue();

      pg.stopServer();
      assertThat(pg.running()).isFalse();
      assertThat(accepts(port)).isFalse();
      assertThatThrownBy(() -> pg.psql("SELECT 1")).isInstanceOf(IllegalStateException.class);

      pg.startServer();
      assertThat(pg.port()).isEqualTo(port);
      assertThat(pg.psql("SELECT count(*) FROM t").trim()).isEqualTo("2");
    }
    assertThat(Files.exists(dir)).isFalse();
    assertThat(accepts(port)).isFalse();
  }

  @Test
  void shouldTerminateAClientConnectionInTheMiddleOfAStatement() throws Exception {
    try (LocalPostgres pg = LocalPostgres.start()) {
      Process client = new ProcessBuilder(List.of(LocalPostgres.findBin().resolve("psql").toString(), "-X",
          "-h", pg.host(), "-p", String.valueOf(pg.port()), "-U", LocalPostgres.USER, "-d", LocalPostgres.DATABASE,
          "-c", "SELECT pg_sleep(60)")).redirectErrorStream(true).start();
      try {
        // A process boundary: wait for the other process's connection to show up, then kill it.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pg.psql("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'").trim()
            .equals("1")) {
          assertThat(System.nanoTime()).isLessThan(deadline);
          Thread.onSpinWait();
        }
        assertThat(pg.terminateBackends()).isEqualTo(1);
        assertThat(client.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(client.exitValue()).isNotZero();
      } finally {
        client.destroyForcibly();
      }
    }
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
