package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;

import java.io.File;
import java.util.concurrent.atomic.AtomicLong;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.io.Closeable;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Writes the record built in its {@link #encoder()} as one Chronicle excerpt: checksums it, rolls the excerpt back if
 * anything fails (the record is then not in the journal), keeps the latest expiry written to the current cycle (the
 * next {@code ROLL} record carries it, and retention reads it) and hands every appended index, with its cycle file, to
 * the {@link Syncer}.
 *
 * <p>A failed write closes Chronicle's appender; the next write opens a new one.
 *
 * <p>Threads: confined to the owner's thread (not thread-safe), except {@link #appendFailures}, which any thread may
 * read, and {@link #close}, which runs once the owner has stopped appending.
 */
final class RecordAppender {

  private final JournalQueue q;
  private final Syncer syncer;
  private final AtomicLong appendFailures = new AtomicLong();

  // Owner's thread only.
  private final RecordEncoder encoder = new RecordEncoder();
  private ExcerptAppender appender;
  private boolean appendedAny;
  private int writtenCycle = CycleCatalog.NONE;
  private long writtenCycleMaxExpiry = NO_EXPIRY;
  private File writtenFile;
  private Runnable writeFault;

  /**
   * Creates Chronicle's appender, which writes the end-of-cycle markers a killed writer did not write (with the tail
   * repaired it has nothing to wait for, and would wait at most {@code chronicleTimeout}). Blocking.
   */
  RecordAppender(JournalQueue q, Syncer syncer) {
    this.q = q;
    this.syncer = syncer;
    this.appender = q.queue.createAppender();
  }

  /** @return the encoder to build the next record in ({@link RecordEncoder#begin} it first) */
  RecordEncoder encoder() {
    return encoder;
  }

  /**
   * Checksums the record the encoder holds and writes it as one excerpt.
   *
   * @param maxExpiry the latest expiry among the record's entries, or {@link RecordFormat#NO_EXPIRY}
   * @return the record's index
   * @throws JournalWriteException if the write failed; the excerpt was rolled back
   */
  long append(long maxExpiry) {
    final int len = encoder.finish();
    final byte[] buf = encoder.buffer();
    final long index;
    final ExcerptAppender a;
    try {
      a = appender();
      DocumentContext dc = a.writingDocument();
      boolean complete = false;
      try {
        Bytes<?> bytes = dc.wire().bytes();
        Runnable fault = writeFault;
        if (fault == null) {
          bytes.write(buf, 0, len);
        } else {
          int half = len / 2;
          bytes.write(buf, 0, half);
          fault.run();
          bytes.write(buf, half, len - half);
        }
        complete = true;
      } finally {
        if (!complete) {
          dc.rollbackOnClose();
        }
        dc.close();
      }
      index = a.lastIndexAppended();
    } catch (RuntimeException | InternalError e) {
      // InternalError: a fault on the mapped file (SIGBUS), e.g. the disk filled up under a sparse file.
      appendFailures.incrementAndGet();
      discardAppender();
      throw new JournalWriteException("journal " + q.dir + ": append failed and was rolled back", e);
    }
    int cycle = q.rollCycle.toCycle(index);
    if (cycle != writtenCycle) {
      writtenCycle = cycle;
      writtenCycleMaxExpiry = NO_EXPIRY;
      writtenFile = a.currentFile();
    }
    if (maxExpiry > writtenCycleMaxExpiry) {
      writtenCycleMaxExpiry = maxExpiry;
    }
    appendedAny = true;
    syncer.appended(index, writtenFile);
    return index;
  }

  /**
   * Returns the latest expiry this appender wrote to {@code cycle}.
   *
   * @param cycle a roll cycle
   * @return the expiry, or {@link RecordFormat#NO_EXPIRY} if it wrote none there (or wrote to a later cycle since)
   */
  long maxExpiryWritten(int cycle) {
    return cycle == writtenCycle ? writtenCycleMaxExpiry : NO_EXPIRY;
  }

  /** @return whether anything was appended since the journal was opened */
  boolean appendedAny() {
    return appendedAny;
  }

  /** @return how many writes failed; thread-safe */
  long appendFailures() {
    return appendFailures.get();
  }

  /** Tests only: runs {@code fault} in the middle of writing each record; null removes it. */
  void writeFault(Runnable fault) {
    this.writeFault = fault;
  }

  /** Closes Chronicle's appender (before the queue closes). */
  void close() {
    Closeable.closeQuietly(appender);
  }

  private ExcerptAppender appender() {
    ExcerptAppender a = appender;
    if (a == null) {
      a = q.queue.createAppender();
      appender = a;
    }
    return a;
  }

  private void discardAppender() {
    ExcerptAppender a = appender;
    appender = null;
    try {
      Closeable.closeQuietly(a);
    } catch (RuntimeException ignored) {
      // a broken appender; the next append opens a new one
    }
  }
}
