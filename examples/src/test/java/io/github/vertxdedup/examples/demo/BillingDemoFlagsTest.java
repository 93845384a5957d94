package io.github.vertxdedup.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** The demo's flags: parsing, defaults, and errors that name the flag and its limit (exit code 2, nothing run). */
class BillingDemoFlagsTest {

  @TempDir
  Path tmp;

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--events|0|--events must be between 1 and 1000000 but was 0",
      "--events|1000001|--events must be between 1 and 1000000 but was 1000001",
      "--duplicate-rate|1.5|--duplicate-rate must be between 0 and 1 but was 1.5",
      "--duplicate-rate|-0.1|--duplicate-rate must be between 0 and 1 but was -0.1",
      "--duplicate-rate|NaN|--duplicate-rate must be between 0 and 1 but was NaN",
      "--window|30s|--window must be a whole number of minutes from 1m to 366d but was 30s",
      "--window|90s|--window must be a whole number of minutes from 1m to 366d but was 90s",
      "--window|367d|--window must be a whole number of minutes from 1m to 366d but was 367d",
      "--window|PT0S|--window must be a whole number of minutes from 1m to 366d but was PT0S",
      "--window|ten minutes|--window must be a whole number of minutes from 1m to 366d, written as 10m, 2h, 1d or"
          + " PT10M, but was 'ten minutes'",
      "--window|0|--window must be a whole number of minutes from 1m to 366d, written as 10m, 2h, 1d or PT10M, but"
          + " was '0'",
      "--bootstrap-servers|notaport|--bootstrap-servers must be HOST:PORT[,HOST:PORT...] with ports 1..65535 but"
          + " held 'notaport'",
      "--bootstrap-servers|localhost:99999|--bootstrap-servers must be HOST:PORT[,HOST:PORT...] with ports"
          + " 1..65535 but held 'localhost:99999'",
      "--bootstrap-servers|localhost:9092,|--bootstrap-servers must be HOST:PORT[,HOST:PORT...] with ports"
          + " 1..65535 but held ''",
      "--mode|exactly-once|--mode must be effect-first or record-first but was exactly-once",
      "--partitions|0|--partitions must be between 1 and 64 but was 0",
      "--partitions|65|--partitions must be between 1 and 64 but was 65",
      "--kills|11|--kills must be between 0 and 10 but was 11",
      "--kills|-1|--kills must be between 0 and 10 but was -1",
      "--rate|0|--rate must be between 1 and 1000000 payments per second but was 0",
  })
  void refusesAFlagOutOfRangeNamingItAndItsLimit(String flag, String value, String message) {
    StringWriter err = new StringWriter();
    int exit = new CommandLine(new BillingDemo()).setErr(new PrintWriter(err)).execute(flag, value);
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString()).startsWith(message);
  }

  @Test
  void refusesAnUnknownFlagAndANonNumber() {
    StringWriter err = new StringWriter();
    assertThat(new CommandLine(new BillingDemo()).setErr(new PrintWriter(err)).execute("--event", "5"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--event");
    err.getBuffer().setLength(0);
    assertThat(new CommandLine(new BillingDemo()).setErr(new PrintWriter(err)).execute("--events", "many"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--events").contains("many");
  }

  @Test
  void refusesAWorkDirectoryThatHoldsALedger() throws Exception {
    Files.writeString(tmp.resolve("ledger.log"), "pay-1 acct-001 100 0 0 1\n");
    StringWriter err = new StringWriter();
    int exit = new CommandLine(new BillingDemo()).setErr(new PrintWriter(err))
        .execute("--work-dir", tmp.toString());
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString()).contains("--work-dir").contains("previous run's ledger");
  }

  @Test
  void refusesMoreKillsThanThePaymentsCanCarry() {
    StringWriter err = new StringWriter();
    int exit = new CommandLine(new BillingDemo()).setErr(new PrintWriter(err))
        .execute("--kills", "10", "--events", "1");
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString()).startsWith("--kills 10 needs --events of at least 10000");
    BillingDemo demo = new BillingDemo();
    new CommandLine(demo).parseArgs("--kills", "5", "--events", "5000");
    demo.validate(); // the lowest --events for 5 kills
  }

  @Test
  void refusesAWorkDirectoryThatCannotBeCreatedOrIsAFile() throws Exception {
    StringWriter err = new StringWriter();
    assertThat(new CommandLine(new BillingDemo()).setErr(new PrintWriter(err))
        .execute("--work-dir", "/proc/nope")).isEqualTo(2);
    assertThat(err.toString()).startsWith("--work-dir /proc/nope cannot be created or written");
    Path file = Files.writeString(tmp.resolve("a-file"), "x");
    err.getBuffer().setLength(0);
    assertThat(new CommandLine(new BillingDemo()).setErr(new PrintWriter(err))
        .execute("--work-dir", file.toString())).isEqualTo(2);
    assertThat(err.toString()).startsWith("--work-dir " + file + " is not a directory");
  }

  @Test
  void parsesWindowsInShortAndIsoForms() {
    assertThat(BillingDemo.parseDuration("10m")).isEqualTo(Duration.ofMinutes(10));
    assertThat(BillingDemo.parseDuration("PT10M")).isEqualTo(Duration.ofMinutes(10));
    assertThat(BillingDemo.parseDuration("pt2h")).isEqualTo(Duration.ofHours(2));
    assertThat(BillingDemo.parseDuration("2h")).isEqualTo(Duration.ofHours(2));
    assertThat(BillingDemo.parseDuration("1d")).isEqualTo(Duration.ofDays(1));
    assertThat(BillingDemo.parseDuration("90s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(BillingDemo.parseDuration("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThatThrownBy(() -> BillingDemo.parseDuration("10 minutes"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("10 minutes");
  }

  @Test
  void defaultsAreTheReadmeRun() {
    BillingDemo demo = new BillingDemo();
    new CommandLine(demo).parseArgs();
    assertThat(demo.validate()).isEqualTo(Duration.ofMinutes(10));
    assertThat(demo.events).isEqualTo(20_000);
    assertThat(demo.duplicateRate).isEqualTo(0.1);
    assertThat(demo.atomicityMode()).isEqualTo(io.github.vertxdedup.kafka.AtomicityMode.EFFECT_FIRST);
    assertThat(demo.kills).isEqualTo(1);
    assertThat(demo.ledgerKey).isTrue();
    assertThat(demo.bootstrapServers).isNull();
  }

  @Test
  void acceptsTheLimits() {
    BillingDemo demo = new BillingDemo();
    new CommandLine(demo).parseArgs("--events", "1", "--duplicate-rate", "1", "--window", "366d", "--mode",
        "record-first", "--partitions", "64", "--kills", "0", "--no-ledger-key");
    assertThat(demo.validate()).isEqualTo(Duration.ofDays(366));
    assertThat(demo.atomicityMode()).isEqualTo(io.github.vertxdedup.kafka.AtomicityMode.RECORD_FIRST);
    assertThat(demo.ledgerKey).isFalse();
    new CommandLine(demo).parseArgs("--window", "1m", "--duplicate-rate", "0");
    assertThat(demo.validate()).isEqualTo(Duration.ofMinutes(1));
  }
}
