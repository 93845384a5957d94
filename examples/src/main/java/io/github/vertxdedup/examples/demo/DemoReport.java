package io.github.vertxdedup.examples.demo;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The demo's final count, computed after the last consumer run from what the driver published and what the consumer
 * runs left in the work directory ({@link BillingConsumer}'s files), independently of the consumer's own key sets:
 * the ledger is read line by line and every payment counted.
 *
 * <h2>How a delivery is classified</h2>
 * A run's deliveries are the {@code (partition, offset)} pairs in its {@code deliveries-<run>.log} (plus any its
 * {@code handled.log} lines name). A delivery the run handled is a handler call (its effect applied, refused by the
 * ledger key, or cut off by a kill: see {@link #effectCutOff}). One
 * it did not handle was dropped by the dedup window if the run ended normally, or if the run was killed and handled
 * a later offset of the same partition (a partition is done with its records in offset order, so every record before
 * a handled one was decided); otherwise the kill cut it off before its outcome was known (it is delivered again after
 * the restart). A dropped delivery is a <em>redelivery after the crash</em> if an earlier run had received the same
 * offset (the killed consumer had not committed it), else a <em>producer retry</em> (a record of its own, published
 * again with the same payment id).
 *
 * <h2>Mismatches</h2>
 * A payment is a mismatch if the ledger does not hold exactly one credit for it with its account and amount, or if
 * there is not exactly one receipt for it; a ledger line or receipt for a payment never published is one too.
 *
 * <p>Not thread-safe; computed once.
 */
final class DemoReport {

  /**
   * A record the driver published.
   *
   * @param partition its partition
   * @param offset its offset
   * @param payment the payment it carries
   * @param retry whether it re-publishes a payment id published before (a producer retry)
   */
  record Published(int partition, long offset, Payment payment, boolean retry) {
  }

  /**
   * The instants of one consumer run, epoch milliseconds, -1 where unknown.
   *
   * @param run the run number, from 1
   * @param startedAtMs when its JVM reached main
   * @param subscribedAtMs when its consumer had subscribed (joining the group follows)
   * @param assignedAtMs when its partitions were assigned and their windows rebuilt
   * @param firstAnswerAtMs when it was done with its first record
   * @param killedAtMs when the driver killed it with SIGKILL, or -1 if it was stopped normally
   * @param lapsedClaims effect-first commits refused because the claim's lease had run out (its last report)
   */
  record RunTimes(int run, long startedAtMs, long subscribedAtMs, long assignedAtMs, long firstAnswerAtMs,
      long killedAtMs, long lapsedClaims) {
  }

  int payments;
  int records;
  int retries;
  long publishedCents;
  int runs;
  int kills;
  long deliveries;
  long handlerCalls;
  long dropped;
  long droppedRetry;
  long droppedRedelivery;
  /** Dropped although it was the first record of its payment id received: a lost payment (should be 0). */
  long droppedFirstCopy;
  long cutOff;
  /**
   * Handler calls of a killed run without a ledger line of their own that were the last call of their partition in
   * that run: the kill may have stopped them between the note in {@code handled.log} and the credit. (Such a call
   * might also have been refused by the key; the files cannot tell, and the sums do not depend on it.)
   */
  long effectCutOff;
  /** As {@link #effectCutOff}, for the receipt. */
  long receiptCutOff;
  long redeliveries;
  int ledgerEntries;
  long ledgerCents;
  int receipts;
  long ledgerRefusals;
  long receiptRefusals;
  int missing;
  int creditedTwice;
  int wrongAmount;
  int unknownCredits;
  int receiptsMissing;
  int receiptsTwice;
  int unknownReceipts;
  int deadLetters;
  /** Payments not credited exactly once with their account and amount, or without exactly one receipt. */
  int wrongPayments;
  long lapsedClaims;
  final List<Long> restartToFirstAnswerMs = new ArrayList<>();
  final List<String> restartDetails = new ArrayList<>();
  JsonObject lastRunStats;

  /**
   * Computes the report.
   *
   * @param published every record the driver published
   * @param workDir the consumer runs' work directory
   * @param runTimes the runs in order; all but the last were killed
   * @return the report
   * @throws IOException if a file cannot be read
   */
  static DemoReport compute(List<Published> published, Path workDir, List<RunTimes> runTimes) throws IOException {
    DemoReport r = new DemoReport();
    Map<String, Payment> payments = new HashMap<>();
    Map<String, Published> byOffset = new HashMap<>();
    for (Published p : published) {
      byOffset.put(key(p.partition(), p.offset()), p);
      r.records++;
      if (p.retry()) {
        r.retries++;
      } else if (payments.put(p.payment().paymentId(), p.payment()) == null) {
        r.publishedCents += p.payment().amountCents();
      }
    }
    r.payments = payments.size();
    r.runs = runTimes.size();

    // Handled lines, written before the effect: <paymentId> <run> <partition> <offset>
    List<String[]> calls = PaymentBook.readLines(workDir.resolve("handled.log"));
    Map<Integer, Set<String>> handledByRun = new HashMap<>();
    for (String[] f : calls) {
      handledByRun.computeIfAbsent(Integer.parseInt(f[1]), k -> new HashSet<>()).add(key(Integer.parseInt(f[2]),
          Long.parseLong(f[3])));
      r.handlerCalls++;
    }

    Set<String> receivedBefore = new HashSet<>();
    for (int i = 0; i < runTimes.size(); i++) {
      RunTimes t = runTimes.get(i);
      boolean killed = t.killedAtMs() >= 0;
      if (killed) {
        r.kills++;
      }
      if (killed) {
        r.lapsedClaims += t.lapsedClaims();
      }
      Set<String> handled = handledByRun.getOrDefault(t.run(), Set.of());
      Set<String> received = new HashSet<>(handled);
      for (String[] f : PaymentBook.readLines(workDir.resolve("deliveries-" + t.run() + ".log"))) {
        received.add(key(Integer.parseInt(f[0]), Long.parseLong(f[1])));
      }
      Map<Integer, Long> lastHandled = new HashMap<>();
      for (String k : handled) {
        lastHandled.merge(partitionOf(k), offsetOf(k), Math::max);
      }
      r.deliveries += received.size();
      for (String k : received) {
        if (receivedBefore.contains(k)) {
          r.redeliveries++;
        }
        if (handled.contains(k)) {
          continue;
        }
        if (killed && offsetOf(k) > lastHandled.getOrDefault(partitionOf(k), -1L)) {
          r.cutOff++;
        } else {
          r.dropped++;
          Published p = byOffset.get(k);
          if (receivedBefore.contains(k)) {
            r.droppedRedelivery++;
          } else if (p != null && p.retry()) {
            r.droppedRetry++;
          } else {
            r.droppedFirstCopy++;
          }
        }
      }
      receivedBefore.addAll(received);
      if (i > 0 && runTimes.get(i - 1).killedAtMs() >= 0) {
        long kill = runTimes.get(i - 1).killedAtMs();
        if (t.firstAnswerAtMs() >= 0) {
          r.restartToFirstAnswerMs.add(t.firstAnswerAtMs() - kill);
        }
        r.restartDetails.add(String.format(Locale.ROOT, "JVM in main %s, subscribed %s, partitions assigned and"
            + " windows rebuilt %s, first record done with %s", since(kill, t.startedAtMs()),
            since(kill, t.subscribedAtMs()), since(kill, t.assignedAtMs()), since(kill, t.firstAnswerAtMs())));
      }
    }

    // Ledger lines: <paymentId> <account> <amountCents> <partition> <offset> <run>; receipts: <paymentId> <account>
    // <amountCents> <run>.
    Map<String, Integer> credits = new HashMap<>();
    Set<String> wrong = new HashSet<>();
    Set<String> creditedBy = new HashSet<>(); // run:partition:offset of the call that wrote the line
    for (String[] f : PaymentBook.readLines(workDir.resolve("ledger.log"))) {
      r.ledgerEntries++;
      creditedBy.add(f[5] + ":" + key(Integer.parseInt(f[3]), Long.parseLong(f[4])));
      Payment p = payments.get(f[0]);
      long cents = Long.parseLong(f[2]);
      r.ledgerCents += cents;
      if (p == null) {
        r.unknownCredits++;
        continue;
      }
      credits.merge(f[0], 1, Integer::sum);
      if (!p.account().equals(f[1]) || p.amountCents() != cents) {
        r.wrongAmount++;
        wrong.add(f[0]);
      }
    }
    Map<String, Integer> sent = new HashMap<>();
    Set<String> sentBy = new HashSet<>();
    for (String[] f : PaymentBook.readLines(workDir.resolve("receipts.log"))) {
      r.receipts++;
      sentBy.add(f[5] + ":" + key(Integer.parseInt(f[3]), Long.parseLong(f[4])));
      if (!payments.containsKey(f[0])) {
        r.unknownReceipts++;
      } else {
        sent.merge(f[0], 1, Integer::sum);
      }
    }
    for (String id : payments.keySet()) {
      int c = credits.getOrDefault(id, 0);
      if (c == 0) {
        r.missing++;
      } else if (c > 1) {
        r.creditedTwice++;
      }
      int s = sent.getOrDefault(id, 0);
      if (s == 0) {
        r.receiptsMissing++;
      } else if (s > 1) {
        r.receiptsTwice++;
      }
      if (c != 1 || s != 1 || wrong.contains(id)) {
        r.wrongPayments++;
      }
    }
    // A call without its own ledger line (or receipt) was refused by the key, unless the kill may have cut it off:
    // the last call of its partition in a killed run (a partition's calls run one at a time, in offset order).
    Map<String, Long> lastCall = new HashMap<>(); // run:partition -> offset
    for (String[] f : calls) {
      lastCall.merge(f[1] + ":" + f[2], Long.parseLong(f[3]), Math::max);
    }
    Set<Integer> killedRuns = new HashSet<>();
    for (RunTimes t : runTimes) {
      if (t.killedAtMs() >= 0) {
        killedRuns.add(t.run());
      }
    }
    for (String[] f : calls) {
      String call = f[1] + ":" + key(Integer.parseInt(f[2]), Long.parseLong(f[3]));
      boolean credited = creditedBy.contains(call);
      boolean sentOwn = sentBy.contains(call);
      boolean mayBeCutOff = killedRuns.contains(Integer.parseInt(f[1]))
          && lastCall.get(f[1] + ":" + f[2]) == Long.parseLong(f[3]);
      if (!credited) {
        if (mayBeCutOff) {
          r.effectCutOff++;
        } else {
          r.ledgerRefusals++;
        }
      }
      if (!sentOwn) {
        if (mayBeCutOff) {
          r.receiptCutOff++;
        } else {
          r.receiptRefusals++;
        }
      }
    }
    r.deadLetters = PaymentBook.readLines(workDir.resolve("dead-letters.log")).size();
    Path stats = workDir.resolve("stats-" + runTimes.get(runTimes.size() - 1).run() + ".json");
    if (Files.exists(stats)) {
      r.lastRunStats = new JsonObject(Files.readString(stats));
      r.lapsedClaims += r.lastRunStats.getJsonObject("kafka").getDouble("lapsedClaims").longValue();
    } else {
      r.lapsedClaims += runTimes.get(runTimes.size() - 1).lapsedClaims();
    }
    return r;
  }

  /**
   * @return the payments not credited exactly once (with their account and amount) or without exactly one receipt,
   *     plus the ledger lines and receipts of payments never published
   */
  int mismatches() {
    return wrongPayments + unknownCredits + unknownReceipts;
  }

  /**
   * Prints the summary.
   *
   * @param out where to
   * @param mode the atomicity mode's flag value
   * @param ledgerKey whether the books refused repeats
   * @param workDir the work directory, shown so the files can be checked
   */
  void print(PrintStream out, String mode, boolean ledgerKey, Path workDir) {
    out.println();
    out.println("Summary (" + mode + ", ledger key " + (ledgerKey ? "on" : "off") + ")");
    row(out, "payments published", payments, String.format(Locale.ROOT, "%,d records: %,d producer retries"
        + " re-published with the same paymentId", records, retries));
    row(out, "consumer runs", runs, String.format(Locale.ROOT, "%d killed with SIGKILL mid-stream, then restarted"
        + " on the same journal", kills));
    row(out, "deliveries seen", deliveries, String.format(Locale.ROOT, "records the consumer received; %,d of them"
        + " redelivered after a crash", redeliveries));
    row(out, "  handler calls", handlerCalls, String.format(Locale.ROOT, "records the window let through;"
        + " = ledger entries %,d + repeats refused %,d + effect cut off %,d", ledgerEntries, ledgerRefusals,
        effectCutOff));
    row(out, "  duplicates dropped", dropped, "by the dedup window; the handler was not called");
    row(out, "    producer retry", droppedRetry, "a second record with a paymentId already seen");
    row(out, "    redelivery after crash", droppedRedelivery, "an offset the killed consumer had received and"
        + " not committed");
    if (droppedFirstCopy > 0) {
      row(out, "    first copy dropped", droppedFirstCopy, "a payment whose first delivery was dropped: its"
          + " effect was lost");
    }
    row(out, "  cut off by the kill", cutOff, "received but not yet decided when killed; delivered again");
    row(out, "ledger entries", ledgerEntries, String.format(Locale.ROOT, "credits; total %s, published %s",
        money(ledgerCents), money(publishedCents)));
    row(out, "receipts", receipts, "receipts sent");
    row(out, "effect cut off by a kill", effectCutOff, String.format(Locale.ROOT, "handler calls a kill stopped"
        + " before their ledger line (the record comes again); receipts cut off %d", receiptCutOff));
    row(out, "repeats refused by the key", ledgerRefusals, ledgerKey ? String.format(Locale.ROOT, "handler calls"
        + " for a payment the ledger already held (in flight at a kill); receipts refused %d; handler calls"
        + " = receipts + receipts refused + cut off", receiptRefusals)
        : "the key is off: a repeat is written");
    row(out, "dead letters", deadLetters, "records the handler gave up on");
    row(out, "lapsed claims", lapsedClaims, lapsedClaims == 0 ? "no claim outlived its lease"
        : "claims whose lease ran out before the handler finished: ids another delivery claimed meanwhile may be"
            + " credited again (raise the lease)");
    row(out, "mismatches", mismatches(), String.format(Locale.ROOT, "payments not credited exactly once with one"
        + " receipt: credit missing %d, twice %d, wrong amount %d; receipt missing %d, twice %d; unknown %d",
        missing, creditedTwice, wrongAmount, receiptsMissing, receiptsTwice, unknownCredits + unknownReceipts));
    for (int i = 0; i < restartDetails.size(); i++) {
      String first = i < restartToFirstAnswerMs.size() ? String.format(Locale.ROOT, "%,d ms",
          restartToFirstAnswerMs.get(i)) : "none";
      out.printf(Locale.ROOT, "  %-28s %10s  kill -> %s%n", "restart to first answer", first,
          restartDetails.get(i));
    }
    if (lastRunStats != null) {
      JsonObject w = lastRunStats.getJsonObject("window");
      JsonObject k = lastRunStats.getJsonObject("kafka");
      out.printf(Locale.ROOT, "  %-28s ids held %,d; verdicts accepted %,d, duplicate %,d, in flight %,d;"
              + " duplicate age mean %,.0f ms, max %,.0f ms%n", "window (last run)",
          w.getDouble("heldIds").longValue(), w.getDouble("accepted").longValue(),
          w.getDouble("duplicate").longValue(), w.getDouble("inFlight").longValue(),
          w.getDouble("duplicateAgeMeanMs"), w.getDouble("duplicateAgeMaxMs"));
      out.printf(Locale.ROOT, "  %-28s records done with %,d, duplicates %,d, in-flight waits %,d, lapsed claims %,d,"
              + " handler failures %,d, 503 retries %,d%n", "consumer (last run)",
          k.getDouble("records").longValue(), k.getDouble("duplicates").longValue(),
          k.getDouble("inFlightWaits").longValue(), k.getDouble("lapsedClaims").longValue(),
          k.getDouble("handlerFailures").longValue(), k.getDouble("unavailable").longValue());
    }
    out.println("  files                        " + workDir
        + " (ledger.log, receipts.log, handled.log, deliveries-*.log, journal/)");
  }

  private static void row(PrintStream out, String name, long value, String note) {
    out.printf(Locale.ROOT, "  %-28s %,10d  %s%n", name, value, note);
  }

  private static String money(long cents) {
    return String.format(Locale.ROOT, "%,d.%02d", cents / 100, cents % 100);
  }

  private static String since(long from, long to) {
    return to < 0 ? "never" : String.format(Locale.ROOT, "%,d ms", to - from);
  }

  private static String key(int partition, long offset) {
    return partition + ":" + offset;
  }

  private static int partitionOf(String key) {
    return Integer.parseInt(key.substring(0, key.indexOf(':')));
  }

  private static long offsetOf(String key) {
    return Long.parseLong(key.substring(key.indexOf(':') + 1));
  }
}
