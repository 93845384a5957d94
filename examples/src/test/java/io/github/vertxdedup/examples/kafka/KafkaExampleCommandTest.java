package io.github.vertxdedup.examples.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The Kafka examples' arguments: checked before anything starts, and a topic and group of its own per run. */
class KafkaExampleCommandTest {

  @TempDir
  Path tmp;

  /** Records what it would run instead of running it. */
  private static final class Recording extends KafkaExampleCommand {
    final List<String> runs = new ArrayList<>();

    @Override
    String name() {
      return "test";
    }

    @Override
    String groupPrefix() {
      return "receipts";
    }

    @Override
    RunSummary run(String servers, String topic, String group, Path dir) {
      runs.add(servers + " " + topic + " " + group + " " + dir);
      return new RunSummary(1, 1, 1, java.util.Map.of(), 0, 0);
    }
  }

  private static int execute(Recording command, StringWriter err, String... args) {
    return new CommandLine(command).setErr(new PrintWriter(err)).execute(args);
  }

  @Test
  void refusesABootstrapServerThatIsNotHostAndPort() {
    for (String bad : List.of("notaport", "localhost:99999", "localhost:0", "localhost:9092,")) {
      Recording c = new Recording();
      StringWriter err = new StringWriter();
      assertThat(execute(c, err, bad, tmp.toString())).as(bad).isEqualTo(2);
      assertThat(err.toString()).startsWith("bootstrap-servers must be - or HOST:PORT");
      assertThat(c.runs).isEmpty();
    }
  }

  @Test
  void refusesAJournalDirectoryThatCannotBeCreated() {
    Recording c = new Recording();
    StringWriter err = new StringWriter();
    assertThat(execute(c, err, "localhost:9092", "/proc/nope")).isEqualTo(2);
    assertThat(err.toString()).startsWith("journal-dir /proc/nope cannot be created or written");
    assertThat(c.runs).isEmpty();
  }

  @Test
  void refusesAnExtraArgument() {
    Recording c = new Recording();
    StringWriter err = new StringWriter();
    assertThat(execute(c, err, "localhost:9092", tmp.toString(), "extra")).isEqualTo(2);
    assertThat(c.runs).isEmpty();
  }

  @Test
  void givesEachRunATopicAndGroupOfItsOwn() throws Exception {
    Recording c = new Recording();
    assertThat(execute(c, new StringWriter(), "localhost:9092", tmp.toString())).isZero();
    Recording again = new Recording();
    assertThat(execute(again, new StringWriter(), "localhost:9092", tmp.toString())).isZero();

    String[] first = c.runs.get(0).split(" ");
    String[] second = again.runs.get(0).split(" ");
    assertThat(first[0]).isEqualTo("localhost:9092");
    assertThat(first[1]).startsWith("payment.succeeded-");
    assertThat(first[2]).startsWith("receipts-");
    assertThat(second[1]).isNotEqualTo(first[1]);
    assertThat(second[2]).isNotEqualTo(first[2]);
    assertThat(second[3]).isEqualTo(first[3]).isEqualTo(tmp.toString());
  }
}
