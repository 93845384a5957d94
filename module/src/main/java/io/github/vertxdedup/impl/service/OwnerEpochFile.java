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
 *   line 2   the instant, window clock ms, before which new ids are unvouched, if that owner (or an earlier one on
 *            this directory) took over without its predecessor's journal; NO_MARK (Long.MIN_VALUE) if none (files of
 *            earlier builds may have no line 2 then)
 *   line 3   that owner's term id, a random number that tells its term from another of the same epoch (epochs
 *            start again at 1 when the whole cluster restarts); absent in files of earlier builds
 * </pre>
 *
 * <p>{@link #read(Path)} and {@link #write(Path, long, long, long)} do the file work and block; {@link #read()} and
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
  /** The term id read when there is no third line, or no number on it: the file names no term. */
  static final long NO_TERM = 0;

  /**
   * What the file says.
   *
   * @param epoch the epoch of the last owner that opened the directory, or {@link #NO_EPOCH}
   * @param mark the unvouched-until instant it carries, clock ms, or {@link #NO_MARK}
   * @param termId that owner's term id, or {@link #NO_TERM}
   */
  record Contents(long epoch, long mark, long termId) {
    /** Nothing: no journal, no file, or no epoch in it. */
    static final Contents NONE = new Contents(NO_EPOCH, NO_MARK, NO_TERM);
  }

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
   * @return what the file says; {@link Contents#NONE} without a journal or file; fails with an
   *     {@link UncheckedIOException} if the file exists but cannot be read
   */
  Future<Contents> read() {
    if (dir == null) {
      return Future.succeededFuture(Contents.NONE);
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
      write(dir, t.epoch(), t.unvouchedUntilMs(), t.termId());
      return null;
    }, false);
  }

  /**
   * Reads {@code <dir>/owner-epoch} (the format above). Blocks on the file system.
   *
   * @param dir the partition's journal directory
   * @return what it says: {@link Contents#NONE} if there is no file or its first line holds no number; no mark or no
   *     term where the line is absent or holds no number
   * @throws UncheckedIOException if the file exists but cannot be read
   */
  static Contents read(Path dir) {
    Path file = dir.resolve(NAME);
    try {
      if (!Files.exists(file)) {
        return Contents.NONE;
      }
      String[] lines = Files.readString(file, StandardCharsets.UTF_8).trim().split("\\s+");
      long epoch;
      try {
        epoch = Long.parseLong(lines[0]);
      } catch (NumberFormatException e) {
        LOG.warn("{} holds '{}', not an epoch: the journal is treated as not handed over", file, lines[0]);
        return Contents.NONE;
      }
      long mark = optional(file, lines, 1, NO_MARK, "not an instant: no unvouched mark is carried over");
      long termId = optional(file, lines, 2, NO_TERM, "not a term id: the journal is treated as not handed over");
      return new Contents(epoch, mark, termId);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /** @return the number on line {@code i}, or {@code none} if the line is absent or holds no number (logged) */
  private static long optional(Path file, String[] lines, int i, long none, String otherwise) {
    if (lines.length <= i) {
      return none;
    }
    try {
      return Long.parseLong(lines[i]);
    } catch (NumberFormatException e) {
      LOG.warn("{} holds '{}', {}", file, lines[i], otherwise);
      return none;
    }
  }

  /**
   * Replaces {@code <dir>/owner-epoch} with {@code epoch}, {@code unvouchedUntilMs} and {@code termId} on three
   * lines (written to a temporary file and moved into place, so a reader sees the old or the new file, never
   * part of one). Blocks on the file system.
   *
   * @param dir the partition's journal directory; created if absent
   * @param epoch the epoch of the owner that opened the directory
   * @param unvouchedUntilMs new ids are unvouched before this instant, clock ms; {@link #NO_MARK}: no mark
   * @param termId the owner's term id
   * @throws UncheckedIOException if the directory or the file cannot be written
   */
  static void write(Path dir, long epoch, long unvouchedUntilMs, long termId) {
    Path file = dir.resolve(NAME);
    try {
      Files.createDirectories(dir);
      Path tmp = dir.resolve(NAME + ".tmp");
      // No mark is written as NO_MARK itself: earlier builds, which read two lines, read it as no mark too.
      String text = epoch + "\n" + unvouchedUntilMs + "\n" + termId + "\n";
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }
}
