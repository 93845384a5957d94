package io.github.vertxdedup.journal.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two small files a service keeps beside its partitions' journals: the routing layout the journals of one
 * address were written with ({@value #LAYOUT_FILE} in {@code <journalDir>/<address>}), and the instant a partition's
 * journal was first opened, or from which a rebuild made it whole ({@value #MEMORY_FILE} in
 * {@code <journalDir>/<address>/<partition>}). Both are replaced
 * atomically (a crash leaves the old file or the new one).
 *
 * <p>Stateless, so thread-safe; every method is blocking (file I/O): call it off the event loop.
 */
public final class JournalLayout {

  /** Name of the file in {@code <journalDir>/<address>} that records the partition count and the routed field. */
  public static final String LAYOUT_FILE = "partitions";
  /**
   * Name of the file in a partition's journal directory that holds the instant (clock milliseconds) the journal was
   * first opened: every id the partition accepted since then is in the journal (or has expired), so after a restart
   * the partition covers event times from then on, not only from its own start.
   */
  public static final String MEMORY_FILE = "memory-begins-ms";

  private static final Logger LOG = LoggerFactory.getLogger("io.github.vertxdedup.journal");

  private JournalLayout() {
  }

  /**
   * Checks, and on first use records, the routing layout the journals under {@code addressDir} were written with:
   * the partition count and, with more than one partition, the routed field ({@code routeByKey}). Routing is a
   * function of both, so journals written with another layout hold ids that their partition no longer owns:
   * redeliveries would reach partitions that never saw them and be accepted again. With one partition the routed
   * field plays no part, so it may change freely.
   *
   * <p>The file holds the count on its first line and {@code routeBy=id} or {@code routeBy=key} on its second. A file
   * of an earlier build holds the count alone: it was written when an event went by its key if it had one, else by
   * its id, which agrees with either mode for the events that mode admits; the mode of this deployment is then
   * recorded.
   *
   * @param addressDir {@code <journalDir>/<address>}
   * @param partitions the partition count of the deployment
   * @param routeByKey the deployment's {@code routeByKey}
   * @throws IllegalArgumentException if the directory records another partition count, or another routed field
   *     with more than one partition, or a file that is not a layout
   * @throws UncheckedIOException if the file cannot be read or written
   */
  public static void checkLayout(Path addressDir, int partitions, boolean routeByKey) {
    Path file = addressDir.resolve(LAYOUT_FILE);
    String routeBy = routeByKey ? "key" : "id";
    try {
      Files.createDirectories(addressDir);
      if (Files.exists(file)) {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        String count = lines.isEmpty() ? "" : lines.get(0).trim();
        int recorded;
        try {
          recorded = Integer.parseInt(count);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("journalDir: " + file + " must hold the partition count on its first"
              + " line but holds '" + count + "'");
        }
        if (recorded != partitions) {
          throw new IllegalArgumentException("partitions must be " + recorded + " for the journals in " + addressDir
              + " (they were written with " + recorded + " partitions, and an id's partition depends on the count)"
              + " but was " + partitions + "; use a new journalDir or address to change the partition count");
        }
        String recordedRouteBy = lines.size() < 2 ? null : lines.get(1).trim();
        if (recordedRouteBy == null) {
          writeLayout(addressDir, file, partitions, routeBy);
          return;
        }
        if (!recordedRouteBy.equals("routeBy=id") && !recordedRouteBy.equals("routeBy=key")) {
          throw new IllegalArgumentException("journalDir: " + file + " must hold routeBy=id or routeBy=key on its"
              + " second line but holds '" + recordedRouteBy + "'");
        }
        if (partitions > 1 && !recordedRouteBy.equals("routeBy=" + routeBy)) {
          throw new IllegalArgumentException("routeByKey must be " + !routeByKey + " for the journals in "
              + addressDir + " (they were written with " + recordedRouteBy + " over " + partitions + " partitions,"
              + " and an event's partition depends on the routed field) but was " + routeByKey + "; use a new"
              + " journalDir or address to change the routed field");
        }
        if (!recordedRouteBy.equals("routeBy=" + routeBy)) {
          writeLayout(addressDir, file, partitions, routeBy);
        }
        return;
      }
      writeLayout(addressDir, file, partitions, routeBy);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot check the journal layout file " + file, e);
    }
  }

  /** Replaces the layout file atomically (a crash leaves the old file or the new one). */
  private static void writeLayout(Path addressDir, Path file, int partitions, String routeBy) throws IOException {
    Path tmp = addressDir.resolve(LAYOUT_FILE + ".tmp");
    Files.writeString(tmp, partitions + "\nrouteBy=" + routeBy + "\n", StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /**
   * Reads the partition journal's {@value #MEMORY_FILE}, creating it with {@code nowMs} on the first open. A file
   * that does not hold an instant is logged as a warning and read as unknown.
   *
   * @param dir the partition's journal directory
   * @param nowMs the owner's time now, epoch milliseconds
   * @return the instant the journal was first opened, or {@link Recovery#NO_MEMORY} if the file holds no instant
   * @throws UncheckedIOException if the file cannot be read or written
   */
  public static long memoryBegan(Path dir, long nowMs) {
    Path file = dir.resolve(MEMORY_FILE);
    try {
      if (Files.exists(file)) {
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        try {
          return Long.parseLong(text);
        } catch (NumberFormatException e) {
          LOG.warn("journal {}: {} holds '{}', not an instant; the partition "
              + "covers only from its earliest record", dir, MEMORY_FILE, text);
          return Recovery.NO_MEMORY;
        }
      }
      Path tmp = dir.resolve(MEMORY_FILE + ".tmp");
      Files.writeString(tmp, nowMs + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
      return nowMs;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read or write " + file, e);
    }
  }

  /**
   * Replaces the partition journal's {@value #MEMORY_FILE} with {@code fromMs}: the journal now holds every id its
   * owner must remember from that instant on, although it was first opened later (a window rebuilt from another
   * source and journaled, such as the Kafka consumer's rebuild from its source topic), or holds less than its first
   * open suggests (that source lost records the journal lacks). The next {@link #memoryBegan} reads it back.
   *
   * @param dir the partition's journal directory; it must exist
   * @param fromMs the instant, epoch milliseconds, {@code >= 0}
   * @throws IllegalArgumentException if {@code fromMs} is negative
   * @throws UncheckedIOException if the file cannot be written
   */
  public static void memoryBegins(Path dir, long fromMs) {
    if (fromMs < 0) {
      throw new IllegalArgumentException("fromMs must be >= 0 but was " + fromMs);
    }
    Path file = dir.resolve(MEMORY_FILE);
    Path tmp = dir.resolve(MEMORY_FILE + ".tmp");
    try {
      Files.writeString(tmp, fromMs + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }
}
