package io.github.vertxdedup.tools;

import static io.github.vertxdedup.tools.JournalInspector.hex;
import static io.github.vertxdedup.tools.JournalInspector.time;

import io.github.vertxdedup.DedupOptions;
import io.github.vertxdedup.journal.ClaimEntry;
import io.github.vertxdedup.journal.JournalContents;
import io.github.vertxdedup.journal.JournalVisitor;
import io.github.vertxdedup.window.Fingerprinter;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code find}: every record about an id, a key or a fingerprint, and its state at the instant judged: in flight (an
 * open claim of it, as id or key), remembered (a live entry of it) or absent, as a restart then would rebuild it
 * ({@link JournalContents}).
 */
@Command(name = "find", mixinStandardHelpOptions = true,
    description = "Finds an id: was it seen, when, at which record, is it still live. Exit code 1 if never seen.")
final class FindCommand implements Callable<Integer> {

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

  /** Exactly one of the three ways to name what to find. */
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
      fp = parseFingerprint(what.fingerprint);
      label = "fingerprint";
    }
    long now = journal.now();
    Seen seen = new Seen(fp);
    long[] rememberedUntil = {0};
    JournalContents contents = journal.read(spec, (f, payload, firstSeenMs, expiresAtMs) -> {
      if (f == fp) {
        rememberedUntil[0] = Math.max(rememberedUntil[0], expiresAtMs);
      }
    }, seen);
    requireKafkaAddressMatches(contents);
    long inFlightUntil = contents.openClaims().stream()
        .filter(c -> c.fingerprint() == fp || c.keyFingerprint() == fp)
        .mapToLong(ClaimEntry::leaseEndMs).max().orElse(0);
    out.println(label + ": fingerprint " + hex(fp));
    seen.lines.forEach(line -> out.println("  " + line));
    String verdict;
    if (inFlightUntil > now) {
      verdict = "IN_FLIGHT until " + time(inFlightUntil);
    } else if (rememberedUntil[0] > now) {
      verdict = "REMEMBERED until " + time(rememberedUntil[0]) + " (a check now would answer DUPLICATE)";
    } else if (!seen.lines.isEmpty()) {
      verdict = "ABSENT: seen, but no longer remembered";
    } else {
      verdict = "ABSENT: not in the cycles that may hold a live entry";
    }
    out.println("state at " + time(now) + ": " + verdict);
    out.flush();
    return seen.lines.isEmpty() ? 1 : 0;
  }

  /**
   * Refuses an {@code --address} that cannot be this journal's when the journal is a Kafka consumer's window: a
   * verdict in another fingerprint scope would say ABSENT of an id the journal does hold. A Kafka window's journal
   * lives in {@code <journalDir>/<group.id>/<topic>-<partition>} and records the offsets committed for that
   * topic-partition; its scope is {@code <dedup.address>.<group.id>.<topic>-<partition>}. So when DIR's name is a
   * topic-partition that the journal's offset records name, the address must be {@code <dedup.address>.<group>.<DIR's
   * name>}, the group being DIR's parent directory's name (a copy of a journal keeps that layout). An event-bus
   * partition's directory is named by its partition number, and is not checked.
   *
   * @param contents the journal's contents, read
   * @throws CommandLine.ParameterException naming {@code --address}, the address given and the address this journal
   *     has, if they differ
   */
  private void requireKafkaAddressMatches(JournalContents contents) {
    Path dir = journal.dir.toAbsolutePath().normalize();
    Path parent = dir.getParent();
    if (dir.getFileName() == null || parent == null || parent.getFileName() == null) {
      return;
    }
    String topicPartition = dir.getFileName().toString();
    if (contents.offsets().stream().noneMatch(o -> (o.topic() + "-" + o.partition()).equals(topicPartition))) {
      return; // not a Kafka window's journal, or one that never committed an offset: nothing says its scope
    }
    String group = parent.getFileName().toString();
    String suffix = "." + group + "." + topicPartition;
    if (address.endsWith(suffix) && address.length() > suffix.length()) {
      return;
    }
    throw new CommandLine.ParameterException(spec.commandLine(), "--address '" + address + "': no journal of that"
        + " address here. " + dir + " is the journal of a Kafka consumer's window, topic-partition " + topicPartition
        + " (its offset records name it) of consumer group '" + group + "' (its directory), whose address is"
        + " <dedup.address>" + suffix + ": --address " + DedupOptions.DEFAULT_ADDRESS + suffix
        + " with the default dedup.address");
  }

  private long parseFingerprint(String hexDigits) {
    long fp;
    try {
      fp = Long.parseUnsignedLong(hexDigits, 16);
    } catch (NumberFormatException e) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--fingerprint must be at most 16 hex digits but was '" + hexDigits + "'");
    }
    if (fp == 0) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--fingerprint must be non-zero (0 means 'no key' in the journal's records) but was 0");
    }
    return fp;
  }

  /** The records that name the fingerprint, as an id or a key, one line each with its record index (hex). */
  private static final class Seen implements JournalVisitor {
    private final long fp;
    final List<String> lines = new ArrayList<>();
    private long index;

    Seen(long fp) {
      this.fp = fp;
    }

    private void seen(String text) {
      lines.add(Long.toHexString(index) + " " + text);
    }

    @Override
    public void onRecord(long i, int length) {
      index = i;
    }

    @Override
    public void onAccept(long f, long key, long payload, long acceptedAtMs, long expiresAtMs) {
      if (f == fp || key == fp) {
        seen("ACCEPT " + (f == fp ? "as id" : "as key") + " at " + time(acceptedAtMs) + ", remembered until "
            + time(expiresAtMs));
      }
    }

    @Override
    public void onClaim(ClaimEntry c) {
      if (c.fingerprint() == fp || c.keyFingerprint() == fp) {
        seen("CLAIM token " + hex(c.token()) + (c.formatVersion() > 1 && c.hasClaimer() ? " by " + c.claimerId()
            : "") + ", lease until " + time(c.leaseEndMs()));
      }
    }

    @Override
    public void onCommit(long f, long token, long expiresAtMs) {
      if (f == fp) {
        seen("COMMIT token " + hex(token) + ", remembered until " + time(expiresAtMs));
      }
    }

    @Override
    public void onRelease(long f, long token) {
      if (f == fp) {
        seen("RELEASE token " + hex(token));
      }
    }
  }
}
