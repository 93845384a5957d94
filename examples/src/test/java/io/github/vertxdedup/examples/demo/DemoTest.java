package io.github.vertxdedup.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The demo end to end, as {@code scripts/demo} runs it but smaller: its own in-process broker, 2,000 payments with
 * 10 % producer retries, a consumer JVM killed once with SIGKILL and restarted. The assertions read the files the
 * consumer runs left (not the demo's own report): every payment credited once with one receipt, the kill happened,
 * the broker redelivered what the killed consumer had received, and the exit code. Real time across processes.
 */
class DemoTest {

  private static final int EVENTS = 2_000;

  @TempDir
  Path tmp;

  @Test
  void creditsEveryPaymentOnceAcrossASigkillAndExitsWithZero() throws Exception {
    Path work = tmp.resolve("work");
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
    int exit = new CommandLine(new BillingDemo().output(out)).execute("--events", Integer.toString(EVENTS),
        "--rate", "1000", "--partitions", "2", "--seed", "7", "--work-dir", work.toString());
    String output = buf.toString(StandardCharsets.UTF_8);
    System.out.println(output);

    assertThat(exit).as("exit code; output:%n%s", output).isZero();
    assertThat(output).contains("SIGKILL consumer run 1").contains("RESULT: OK");
    assertThat(summaryValue(output, "mismatches")).isZero();
    assertThat(summaryValue(output, "payments published")).isEqualTo(EVENTS);

    // The ledger and the receipts, read here: ids <prefix>0 .. <prefix>1999, each exactly once.
    Map<Integer, Integer> credits = countByIndex(work.resolve("ledger.log"));
    Map<Integer, Integer> receipts = countByIndex(work.resolve("receipts.log"));
    assertThat(credits).hasSize(EVENTS).allSatisfy((i, n) -> assertThat(n).as("credits of payment %d", i)
        .isEqualTo(1));
    assertThat(receipts).hasSize(EVENTS).allSatisfy((i, n) -> assertThat(n).as("receipts of payment %d", i)
        .isEqualTo(1));
    assertThat(credits.keySet()).allSatisfy(i -> assertThat(i).isBetween(0, EVENTS - 1));

    // The kill: run 1 left no stats (it never stopped normally); run 2 did, and there was no run 3.
    assertThat(work.resolve("stats-1.json")).doesNotExist();
    assertThat(work.resolve("stats-2.json")).exists();
    assertThat(work.resolve("deliveries-3.log")).doesNotExist();

    // The broker redelivered offsets the killed consumer had received and not committed.
    Set<String> received1 = offsets(work.resolve("deliveries-1.log"));
    Set<String> received2 = offsets(work.resolve("deliveries-2.log"));
    Set<String> redelivered = new HashSet<>(received1);
    redelivered.retainAll(received2);
    assertThat(redelivered).as("offsets delivered to both runs").isNotEmpty();

    // Every handler call credited, was refused by the ledger key, or was cut off by the kill before its credit.
    List<String[]> handled = PaymentBook.readLines(work.resolve("handled.log"));
    assertThat(summaryValue(output, "  handler calls")).isEqualTo(handled.size());
    assertThat(handled.size()).isEqualTo(EVENTS + summaryValue(output, "repeats refused by the key")
        + summaryValue(output, "effect cut off by a kill"));
    assertThat(summaryValue(output, "effect cut off by a kill"))
        .as("one call at most per partition").isLessThanOrEqualTo(2);
  }

  private static Map<Integer, Integer> countByIndex(Path book) throws Exception {
    Map<Integer, Integer> counts = new HashMap<>();
    for (String[] f : PaymentBook.readLines(book)) {
      String id = f[0];
      counts.merge(Integer.parseInt(id.substring(id.lastIndexOf('-') + 1)), 1, Integer::sum);
    }
    return counts;
  }

  private static Set<String> offsets(Path log) throws Exception {
    Set<String> s = new HashSet<>();
    for (String line : Files.readAllLines(log)) {
      String[] f = line.split(" ");
      s.add(f[0] + ":" + f[1]);
    }
    return s;
  }

  private static long summaryValue(String output, String name) {
    Matcher m = Pattern.compile("^  " + Pattern.quote(name) + " +([0-9,]+) ", Pattern.MULTILINE).matcher(output);
    assertThat(m.find()).as("summary line '%s' in%n%s", name, output).isTrue();
    return Long.parseLong(m.group(1).replace(",", ""));
  }
}
