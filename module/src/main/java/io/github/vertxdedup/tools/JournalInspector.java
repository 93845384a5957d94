package io.github.vertxdedup.tools;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.journal.ClaimerTextV1;
import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.CommittedOffsets;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.JournalOptions;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.journal.OffsetCommit;
import io.github.vertxdedup.journal.ReplayResult;
import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.window.Fingerprinter;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Command-line inspector of one partition's journal ({@code <journalDir>/<address>/<partition>}): {@code dump} its
 * records, {@code find} an id (was it seen, when, at which record, is it still live), {@code summary} (live ids,
 * oldest and newest, bytes per id, committed offsets per topic-partition). See {@code docs/journal.md}; run it with
 * {@code scripts/journal-inspector}.
 *
 * <p>It reads the journal as a restarting partition would: it takes the journal's lock (so inspect a stopped
 * partition, or a copy of its directory: a running owner holds the lock), repairs what a killed writer left, and
 * replays from the oldest cycle that may still hold a live entry (older cycles are deletable and not read). It
 * writes no record. Liveness is judged at {@code --now-ms} (default: the current time).
 */
@Command(name = "journal-inspector", mixinStandardHelpOptions = true, version = "journal-inspector 1",
    description = "Inspects the journal of one dedup partition.",
    subcommands = {JournalInspector.Dump.class, JournalInspector.Find.class, JournalInspector.Summary.class})
public final class JournalInspector implements Runnable {

  @Spec
  CommandSpec spec;

  /**
   * Runs the inspector and exits with its exit code (0 success, 1 id not found, 2 bad usage or unreadable journal).
   *
   * @param args the command line; {@code --help} lists the commands
   */
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** @return the command line, for tests and embedding */
  public static CommandLine commandLine() {
    return new CommandLine(new JournalInspector());
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** The journal to read and the instant to judge liveness at. */
  static final class JournalArgs {
    @Parameters(index = "0", paramLabel = "DIR",
        description = "a partition's journal directory, <journalDir>/<address>/<partition>, or"
            + " <journalDir>/<group.id>/<topic>-<partition> for a Kafka window")
    Path dir;

    @Option(names = "--window-ms", required = true,
        description = "the service's windowMs: the journal's roll cycle is derived from it")
    long windowMs;

    @Option(names = "--now-ms", description = "judge liveness at this epoch millisecond (default: now)")
    Long nowMs;

    long now() {
      return nowMs != null ? nowMs : System.currentTimeMillis();
    }

    /** Refuses a value outside its range, as a usage error (exit code 2) naming the option and the range. */
    void validate(CommandSpec spec) {
      if (windowMs <= 0 || windowMs > DedupOptions.MAX_WINDOW_MS) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--window-ms must be 1 .. "
            + DedupOptions.MAX_WINDOW_MS + " (366 days, the longest windowMs a service takes) but was " + windowMs);
      }
      if (nowMs != null && nowMs < 0) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "--now-ms must be >= 0 (epoch milliseconds) but was " + nowMs);
      }
    }

    ReplayResult replay(CommandSpec spec, JournalVisitor visitor) {
      validate(spec);
      if (cycleFiles(dir) == 0) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "DIR must be a journal directory (with .cq4 cycle files) but " + dir + " has none");
      }
      long now = now();
      JournalOptions options = new JournalOptions()
          .setRollCycle(JournalOptions.rollCycleFor(Duration.ofMillis(windowMs)))
          .setSyncPolicy(SyncPolicy.NONE)
          .setClock(() -> now)
          .setProgressListener((d, p, done) -> { });
      try (Journal journal = Journal.open(dir, options)) {
        return journal.replay(visitor);
      }
    }
  }

  static long cycleFiles(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".cq4")).count();
    } catch (IOException e) {
      return 0;
    }
  }

  static String time(long epochMs) {
    return Instant.ofEpochMilli(epochMs).toString();
  }

  static String hex(long v) {
    return String.format("%016x", v);
  }

  static String optHex(long v) {
    return v == 0 ? "-" : hex(v);
  }

  // ------------------------------------------------------------------------------------------------------- dump

  /** Prints every record of the replay, one line per entry. */
  @Command(name = "dump", mixinStandardHelpOptions = true, description = "Prints the records, one line per entry.")
  static final class Dump implements Callable<Integer> {
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
      long now = journal.now();
      long[] printed = {0};
      long[] index = {0};
      ReplayResult r = journal.replay(spec, new JournalVisitor() {
        private void line(String text) {
          if (printed[0]++ < limit) {
            out.println(Long.toHexString(index[0]) + " " + text);
          }
        }

        @Override
        public void onRecord(long i, int length) {
          index[0] = i;
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
                + " rememberUntil=" + (a[2] == ClaimEntry.NOT_RECORDED ? "default" : time(a[2]))
                + " (format 1)";
          } else {
            detail = " claimedAt=" + (c.claimedAtMs() == ClaimEntry.NOT_RECORDED ? "-" : time(c.claimedAtMs()))
                + " payload=" + optHex(c.payloadHash()) + " rememberUntil="
                + (c.rememberUntilMs() == ClaimEntry.NOT_RECORDED ? "default" : time(c.rememberUntilMs()))
                + " claimer=" + (c.hasClaimer() ? c.claimerId() : "-");
          }
          line("CLAIM fp=" + hex(c.fingerprint()) + " key=" + optHex(c.keyFingerprint()) + " token="
              + hex(c.token()) + detail + " leaseEnd=" + time(c.leaseEndMs())
              + (c.leaseEndMs() > now ? " open" : " ended"));
        }

        @Override
        public void onCommit(long fp, long token, long expiresAtMs) {
          line("COMMIT fp=" + hex(fp) + " token=" + hex(token) + " expiresAt=" + time(expiresAtMs)
              + (expiresAtMs > now ? " live" : " expired"));
        }

        @Override
        public void onRelease(long fp, long token) {
          line("RELEASE fp=" + hex(fp) + " token=" + hex(token));
        }

        @Override
        public void onOffsetCommit(String topic, int partition, long offset) {
          line("OFFSET topic=" + topic + " partition=" + partition + " offset=" + offset);
        }
      });
      out.println("# " + r.recordsRead() + " records, " + r.entries() + " entries (" + Math.min(printed[0], limit)
          + " printed), " + r.tornRecords() + " torn, cycles read " + r.cyclesRead() + ", skipped (expired) "
          + r.cyclesSkipped());
      out.flush();
      return 0;
    }
  }

  // ------------------------------------------------------------------------------------------------------- find

  /** Finds an id, a key or a fingerprint: every record about it, and whether it is remembered now. */
  @Command(name = "find", mixinStandardHelpOptions = true,
      description = "Finds an id: was it seen, when, at which record, is it still live. Exit code 1 if never seen.")
  static final class Find implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    JournalArgs journal = new JournalArgs();

    @Option(names = "--address", defaultValue = "dedup",
        description = "the service address (the fingerprint scope is <address>/id or <address>/key); default dedup;"
            + " for a Kafka window <dedup.address>.<group.id>.<topic>-<partition>")
    String address;

    @CommandLine.ArgGroup(exclusive = true, multiplicity = "1")
    What what;

    static final class What {
      @Option(names = "--id", description = "the event id, as sent to the service")
      String id;
      @Option(names = "--key", description = "the business key, as sent to the service")
      String key;
      @Option(names = "--fingerprint", description = "a fingerprint, 16 hex digits")
      String fingerprint;
    }

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      final long fp;
      final String label;
      if (what.id != null) {
        fp = Fingerprinter.forScope(address + "/id").fingerprint(what.id);
        label = "id '" + what.id + "' (scope " + address + "/id)";
      } else if (what.key != null) {
        fp = Fingerprinter.forScope(address + "/key").fingerprint(what.key);
        label = "key '" + what.key + "' (scope " + address + "/key)";
      } else {
        try {
          fp = Long.parseUnsignedLong(what.fingerprint, 16);
        } catch (NumberFormatException e) {
          throw new CommandLine.ParameterException(spec.commandLine(),
              "--fingerprint must be at most 16 hex digits but was '" + what.fingerprint + "'");
        }
        if (fp == 0) {
          throw new CommandLine.ParameterException(spec.commandLine(),
              "--fingerprint must be non-zero (0 means 'no key' in the journal's records) but was 0");
        }
        label = "fingerprint";
      }
      long now = journal.now();
      List<String> seen = new ArrayList<>();
      long[] state = {0, 0, 0}; // remembered until, open claim lease end, record index
      journal.replay(spec, new JournalVisitor() {
        @Override
        public void onRecord(long i, int length) {
          state[2] = i;
        }

        private void seen(String text) {
          seen.add(Long.toHexString(state[2]) + " " + text);
        }

        @Override
        public void onAccept(long f, long key, long payload, long acceptedAtMs, long expiresAtMs) {
          if (f == fp || key == fp) {
            seen("ACCEPT " + (f == fp ? "as id" : "as key") + " at " + time(acceptedAtMs) + ", remembered until "
                + time(expiresAtMs));
            state[0] = Math.max(state[0], expiresAtMs);
          }
        }

        @Override
        public void onClaim(ClaimEntry c) {
          if (c.fingerprint() == fp || c.keyFingerprint() == fp) {
            seen("CLAIM token " + hex(c.token()) + (c.formatVersion() > 1 && c.hasClaimer() ? " by "
                + c.claimerId() : "") + ", lease until " + time(c.leaseEndMs()));
            state[1] = c.leaseEndMs();
          }
        }

        @Override
        public void onCommit(long f, long token, long expiresAtMs) {
          if (f == fp) {
            seen("COMMIT token " + hex(token) + ", remembered until " + time(expiresAtMs));
            state[0] = Math.max(state[0], expiresAtMs);
            state[1] = 0;
          }
        }

        @Override
        public void onRelease(long f, long token) {
          if (f == fp) {
            seen("RELEASE token " + hex(token));
            state[1] = 0;
          }
        }
      });
      out.println(label + ": fingerprint " + hex(fp));
      seen.forEach(line -> out.println("  " + line));
      String verdict;
      if (state[1] > now) {
        verdict = "IN_FLIGHT until " + time(state[1]);
      } else if (state[0] > now) {
        verdict = "REMEMBERED until " + time(state[0]) + " (a check now would answer DUPLICATE)";
      } else if (!seen.isEmpty()) {
        verdict = "ABSENT: seen, but no longer remembered";
      } else {
        verdict = "ABSENT: not in the cycles that may hold a live entry";
      }
      out.println("state at " + time(now) + ": " + verdict);
      out.flush();
      return seen.isEmpty() ? 1 : 0;
    }
  }

  // ---------------------------------------------------------------------------------------------------- summary

  /** Counts what a restart would rebuild, and what it costs on disk. */
  @Command(name = "summary", mixinStandardHelpOptions = true,
      description = "Live ids, oldest and newest, bytes per id, committed offsets per topic-partition.")
  static final class Summary implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    JournalArgs journal = new JournalArgs();

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      long now = journal.now();
      Long2LongHashMap live = new Long2LongHashMap(0);
      Long2ObjectHashMap<long[]> claims = new Long2ObjectHashMap<>();
      CommittedOffsets offsets = new CommittedOffsets();
      long[] stats = {0, Long.MAX_VALUE, Long.MIN_VALUE}; // record bytes, oldest and newest live acceptance
      ReplayResult r = journal.replay(spec, new JournalVisitor() {
        @Override
        public void onRecord(long index, int length) {
          stats[0] += length + 4L; // Chronicle's excerpt header
        }

        private void remember(long f, long acceptedAtMs, long expiresAtMs) {
          if (expiresAtMs > now) {
            live.put(f, Math.max(live.get(f), expiresAtMs));
            stats[1] = Math.min(stats[1], acceptedAtMs);
            stats[2] = Math.max(stats[2], acceptedAtMs);
          }
        }

        @Override
        public void onAccept(long f, long key, long payload, long acceptedAtMs, long expiresAtMs) {
          remember(f, acceptedAtMs, expiresAtMs);
          if (key != 0) {
            remember(key, acceptedAtMs, expiresAtMs);
          }
        }

        @Override
        public void onClaim(ClaimEntry c) {
          claims.put(c.fingerprint(), new long[] {c.keyFingerprint(), c.leaseEndMs()});
        }

        @Override
        public void onCommit(long f, long token, long expiresAtMs) {
          long[] c = claims.remove(f);
          remember(f, expiresAtMs - journal.windowMs, expiresAtMs);
          if (c != null && c[0] != 0) {
            remember(c[0], expiresAtMs - journal.windowMs, expiresAtMs);
          }
        }

        @Override
        public void onRelease(long f, long token) {
          claims.remove(f);
        }

        @Override
        public void onOffsetCommit(String topic, int partition, long offset) {
          offsets.record(topic, partition, offset);
        }
      });
      long openClaims = claims.values().stream().filter(c -> c[1] > now).count();
      out.println("journal " + journal.dir.toAbsolutePath().normalize() + " at " + time(now));
      out.println("cycle files: " + cycleFiles(journal.dir) + " on disk, " + r.cyclesRead() + " read, "
          + r.cyclesSkipped() + " skipped (every entry expired)");
      out.println("records: " + r.recordsRead() + " (" + r.tornRecords() + " torn), entries: " + r.entries()
          + " (accepts " + r.accepts() + ", claims " + r.claims() + ", commits " + r.commits() + ", releases "
          + r.releases() + ", offsets " + r.offsetCommits() + ")");
      out.println("live entries (ids and keys remembered now): " + live.size() + ", open claims: " + openClaims);
      if (!live.isEmpty()) {
        out.println("oldest live: " + time(stats[1]) + ", newest live: " + time(stats[2]));
      }
      out.println("record bytes read: " + stats[0] + (live.isEmpty() ? ""
          : String.format(" (%.1f bytes per live entry, Chronicle's index not counted)",
              (double) stats[0] / live.size())));
      for (OffsetCommit o : offsets.toList()) {
        out.println("offset " + o.topic() + "/" + o.partition() + ": " + o.offset());
      }
      out.flush();
      return 0;
    }
  }
}
