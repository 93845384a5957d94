package io.github.vertxdedup.tools;

import static io.github.vertxdedup.tools.JournalInspector.time;

import io.github.vertxdedup.journal.JournalContents;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.ReplayResult;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.agrona.collections.LongHashSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code summary}: what a restart at the instant judged would rebuild ({@link JournalContents}): live ids and keys,
 * the oldest and newest of them, open claims, committed offsets; and what the records cost on disk.
 */
@Command(name = "summary", mixinStandardHelpOptions = true,
    description = "Live ids, oldest and newest, bytes per id, committed offsets per topic-partition.")
final class SummaryCommand implements Callable<Integer> {

  /** Chronicle's header before each record, bytes. */
  private static final int EXCERPT_HEADER_BYTES = 4;

  @Spec
  CommandSpec spec;

  @Mixin
  JournalArgs journal = new JournalArgs();

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    long now = journal.now();
    LongHashSet live = new LongHashSet();
    long[] stats = {0, Long.MAX_VALUE, Long.MIN_VALUE}; // record bytes, oldest and newest live first-seen
    JournalContents contents = journal.read(spec, (fp, payload, firstSeenMs, expiresAtMs) -> {
      live.add(fp);
      stats[1] = Math.min(stats[1], firstSeenMs);
      stats[2] = Math.max(stats[2], firstSeenMs);
    }, new JournalVisitor() {
      @Override
      public void onRecord(long index, int length) {
        stats[0] += length + EXCERPT_HEADER_BYTES;
      }
    });
    ReplayResult r = contents.replay();
    out.println("journal " + journal.dir.toAbsolutePath().normalize() + " at " + time(now));
    out.println("cycle files: " + contents.cycleFiles() + " on disk, " + r.cyclesRead() + " read, "
        + r.cyclesSkipped() + " skipped (every entry expired)");
    out.println("records: " + r.recordsRead() + " (" + r.tornRecords() + " torn), entries: " + r.entries()
        + " (accepts " + r.accepts() + ", claims " + r.claims() + ", commits " + r.commits() + ", releases "
        + r.releases() + ", offsets " + r.offsetCommits() + ")");
    out.println("live entries (ids and keys remembered now): " + live.size() + ", open claims: "
        + contents.openClaims().size());
    if (!live.isEmpty()) {
      out.println("oldest live: " + time(stats[1]) + ", newest live: " + time(stats[2]));
    }
    out.println("record bytes read: " + stats[0] + (live.isEmpty() ? ""
        : String.format(" (%.1f bytes per live entry, Chronicle's index not counted)",
            (double) stats[0] / live.size())));
    for (OffsetCommit o : contents.offsets()) {
      out.println("offset " + o.topic() + "/" + o.partition() + ": " + o.offset());
    }
    out.flush();
    return 0;
  }
}
