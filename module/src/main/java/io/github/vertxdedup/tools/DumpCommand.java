package io.github.vertxdedup.tools;

import static io.github.vertxdedup.tools.JournalInspector.hex;
import static io.github.vertxdedup.tools.JournalInspector.optHex;
import static io.github.vertxdedup.tools.JournalInspector.time;

import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.JournalContents;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.ReplayResult;
import io.github.vertxdedup.journal.internal.ClaimerTextV1;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import org.agrona.collections.Long2LongHashMap;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code dump}: prints every record of the replay, one line per entry, with its record index and liveness, then the
 * claims open at the instant judged.
 *
 * <p>Whether a claim is open is the journal's recovery's answer ({@link JournalContents#openClaims}), the same that
 * {@code summary} counts: neither committed nor released by a later record, not replaced by a later claim of the same
 * fingerprint, lease not ended. A CLAIM line cannot say so when it is printed (the commit or release comes later in
 * the journal), so it gives the lease end only, and the open claims are listed after the replay, each with the index
 * of the CLAIM record that holds it.
 */
@Command(name = "dump", mixinStandardHelpOptions = true,
    description = "Prints the records, one line per entry, then the claims open at the instant judged.")
final class DumpCommand implements Callable<Integer> {

  @Spec
  CommandSpec spec;

  @Mixin
  JournalArgs journal = new JournalArgs();

  @Option(names = "--limit", description = "print at most this many entries, >= 0 (default: all)")
  long limit = Long.MAX_VALUE;

  @Override
  public Integer call() {
    if (limit < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--limit must be >= 0 (0 prints only the totals) but was " + limit);
    }
    journal.validate(spec);
    PrintWriter out = spec.commandLine().getOut();
    Lines lines = new Lines(out, journal.now());
    JournalContents contents = journal.read(spec, (fp, payload, firstSeenMs, expiresAtMs) -> { }, lines);
    List<ClaimEntry> open = new ArrayList<>(contents.openClaims());
    open.sort(Comparator.comparingLong(c -> lines.claimRecords.get(c.fingerprint())));
    out.println("# open claims at " + time(contents.nowMs()) + ": " + open.size()
        + " (neither committed nor released, lease not ended)");
    for (ClaimEntry c : open) {
      out.println("#   " + Long.toHexString(lines.claimRecords.get(c.fingerprint())) + " CLAIM fp="
          + hex(c.fingerprint()) + " token=" + hex(c.token()) + " leaseEnd=" + time(c.leaseEndMs()));
    }
    ReplayResult r = contents.replay();
    out.println("# " + r.recordsRead() + " records, " + r.entries() + " entries (" + Math.min(lines.printed, limit)
        + " printed), " + r.tornRecords() + " torn, cycles read " + r.cyclesRead() + ", skipped (expired) "
        + r.cyclesSkipped());
    out.flush();
    return 0;
  }

  /**
   * One line per entry, prefixed with its record's index (hex), up to {@code --limit}; and, per fingerprint, the
   * index of its latest CLAIM record (the claim a commit or release of the fingerprint settles, as in the recovery).
   */
  private final class Lines implements JournalVisitor {
    private final PrintWriter out;
    private final long now;
    long printed;
    private long index;
    /** Fingerprint to the record index of its latest claim; kept while the claim may be open. */
    final Long2LongHashMap claimRecords = new Long2LongHashMap(-1);

    Lines(PrintWriter out, long now) {
      this.out = out;
      this.now = now;
    }

    private void line(String text) {
      if (printed++ < limit) {
        out.println(Long.toHexString(index) + " " + text);
      }
    }

    @Override
    public void onRecord(long i, int length) {
      index = i;
    }

    @Override
    public void onAccept(long fp, long key, long payload, long acceptedAtMs, long expiresAtMs) {
      line("ACCEPT fp=" + hex(fp) + " key=" + optHex(key) + " payload=" + optHex(payload) + " acceptedAt="
          + time(acceptedAtMs) + " expiresAt=" + time(expiresAtMs) + (expiresAtMs > now ? " live" : " expired"));
    }

    @Override
    public void onClaim(ClaimEntry c) {
      String detail;
      if (c.formatVersion() == 1) {
        long[] a = ClaimerTextV1.decode(c.claimerId());
        detail = a == null ? " text=" + c.claimerId() : " claimedAt=" + time(a[0]) + " payload=" + optHex(a[1])
            + " rememberUntil=" + (a[2] == ClaimEntry.NOT_RECORDED ? "default" : time(a[2])) + " (format 1)";
      } else {
        detail = " claimedAt=" + (c.claimedAtMs() == ClaimEntry.NOT_RECORDED ? "-" : time(c.claimedAtMs()))
            + " payload=" + optHex(c.payloadHash()) + " rememberUntil="
            + (c.rememberUntilMs() == ClaimEntry.NOT_RECORDED ? "default" : time(c.rememberUntilMs()))
            + " claimer=" + (c.hasClaimer() ? c.claimerId() : "-");
      }
      // No open/ended here: a later record may settle the claim. The open claims are listed after the replay.
      line("CLAIM fp=" + hex(c.fingerprint()) + " key=" + optHex(c.keyFingerprint()) + " token=" + hex(c.token())
          + detail + " leaseEnd=" + time(c.leaseEndMs()));
      claimRecords.put(c.fingerprint(), index);
    }

    @Override
    public void onCommit(long fp, long token, long expiresAtMs) {
      claimRecords.remove(fp);
      line("COMMIT fp=" + hex(fp) + " token=" + hex(token) + " expiresAt=" + time(expiresAtMs)
          + (expiresAtMs > now ? " live" : " expired"));
    }

    @Override
    public void onRelease(long fp, long token) {
      claimRecords.remove(fp);
      line("RELEASE fp=" + hex(fp) + " token=" + hex(token));
    }

    @Override
    public void onOffsetCommit(String topic, int partition, long offset) {
      line("OFFSET topic=" + topic + " partition=" + partition + " offset=" + offset);
    }
  }
}
