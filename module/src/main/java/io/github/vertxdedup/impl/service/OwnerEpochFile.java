package io.github.vertxdedup.impl.service;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code owner-epoch} file of one partition's journal directory: which owner last opened the journal, so that
 * the next owner on the same directory can tell whether the journal was handed over to it.
 *
 * <pre>
 * &lt;journalDir&gt;/&lt;address&gt;/&lt;p&gt;/owner-epoch, UTF-8 text:
 *   line 1   the epoch of the last owner that opened the directory (written once its partition is deployed)
 *   line 2   optional: the instant, window clock ms, before which new ids are unvouched, present if that owner
 *            (or an earlier one on this directory) took over without its predecessor's journal
 * </pre>
 *
 * <p>{@link #read(Path)} and {@link #write(Path, long, long)} do the file work and block; {@link #read()} and
 * {@link #write(OwnerTerm)} run them on a worker through {@link Vertx#executeBlocking} (unordered), completing on the
 * caller's context, so {@link PartitionOwnership} can call them from its event loop.
 *
 * <p>Thread-safety: immutable; the static methods are safe from any thread, though two writers of one directory at
 * once would race (the ownership's lock makes one writer per partition). Its log lines keep the category of
 * {@link PartitionOwnership}, where they were written before this class was split from it, so log configuration that
 * names that category still sees them.
 */
final class OwnerEpochFile {

  private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);

  /** The file's name in a partition's journal directory. */
  static final String NAME = "owner-epoch";
  /** The epoch read when there is no file, or no number on its first line: no owner opened the directory. */
  static final long NO_EPOCH = -1;
  /** The unvouched mark read when there is no second line, or no number on it: none is carried over. */
  static final long NO_MARK = Long.MIN_VALUE;

  private final Vertx vertx;
  private final Path dir;

  /**
   * @param vertx the Vert.x instance whose workers do the file work
   * @param dir the partition's journal directory, or null without a journal (then nothing is read or written)
   */
  OwnerEpochFile(Vertx vertx, Path dir) {
    this.vertx = vertx;
    this.dir = dir;
  }

  /**
   * Reads the file off the event loop.
   *
   * @return {epoch of the last owner that opened the directory or {@link #NO_EPOCH}, unvouched-until clock ms or
   *     {@link #NO_MARK}}; both "none" without a journal or file; fails with an {@link UncheckedIOException} if the
   *     file exists but cannot be read
   */
  Future<long[]> read() {
    if (dir == null) {
      return Future.succeededFuture(new long[] {NO_EPOCH, NO_MARK});
    }
    return vertx.executeBlocking(() -> read(dir), false);
  }

  /**
   * Writes term {@code t}'s epoch and unvouched mark into the file, off the event loop.
   *
   * @param t the term that opened the journal
   * @return completes once the file is in place (at once without a journal); fails with an
   *     {@link UncheckedIOException} if the directory or the file cannot be written
   */
  Future<Void> write(OwnerTerm t) {
    if (dir == null) {
      return Future.succeededFuture();
    }
    return vertx.executeBlocking(() -> {
      write(dir, t.epoch(), t.unvouchedUntilMs());
      return null;
    }, false);
  }

  /**
   * Reads {@code <dir>/owner-epoch}: its first line is the epoch of the last owner that opened the directory, its
   * optional second line the instant (clock ms) before which new ids are unvouched, carried over from a takeover
   * without the previous owner's journal. Blocks on the file system.
   *
   * @param dir the partition's journal directory
   * @return {epoch, unvouched-until}: {@link #NO_EPOCH} if there is no file or its first line holds no number;
   *     {@link #NO_MARK} if there is no second line or it holds no number
   * @throws UncheckedIOException if the file exists but cannot be read
   */
  static long[] read(Path dir) {
    Path file = dir.resolve(NAME);
    long[] read = {NO_EPOCH, NO_MARK};
    try {
      if (!Files.exists(file)) {
        return read;
      }
      String[] lines = Files.readString(file, StandardCharsets.UTF_8).trim().split("\\s+");
      try {
        read[0] = Long.parseLong(lines[0]);
      } catch (NumberFormatException e) {
        LOG.warn("{} holds '{}', not an epoch: the journal is treated as not handed over", file, lines[0]);
        return read;
      }
      if (lines.length > 1) {
        try {
          read[1] = Long.parseLong(lines[1]);
        } catch (NumberFormatException e) {
          LOG.warn("{} holds '{}', not an instant: no unvouched mark is carried over", file, lines[1]);
        }
      }
      return read;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /**
   * Replaces {@code <dir>/owner-epoch} with {@code epoch} and, if any, {@code unvouchedUntilMs} on a second line
   * (written to a temporary file and moved into place, so a reader sees the old or the new file, never part of one).
   * Blocks on the file system.
   *
   * @param dir the partition's journal directory; created if absent
   * @param epoch the epoch of the owner that opened the directory
   * @param unvouchedUntilMs new ids are unvouched before this instant, clock ms; {@link #NO_MARK}: no mark
   * @throws UncheckedIOException if the directory or the file cannot be written
   */
  static void write(Path dir, long epoch, long unvouchedUntilMs) {
    Path file = dir.resolve(NAME);
    try {
      Files.createDirectories(dir);
      Path tmp = dir.resolve(NAME + ".tmp");
      String text = epoch + "\n" + (unvouchedUntilMs == NO_MARK ? "" : unvouchedUntilMs + "\n");
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }
}
