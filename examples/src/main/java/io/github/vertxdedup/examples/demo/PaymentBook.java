package io.github.vertxdedup.examples.demo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * An append-only book of one line per payment, the stand-in for a billing database table: the demo's ledger
 * ({@code ledger.log}: one credit per line) and its receipts ({@code receipts.log}: one receipt sent per line). Each
 * line starts with the payment id, then space-separated fields.
 *
 * <h2>Why it survives a SIGKILL</h2>
 * A line is written with one {@code write(2)} on a file opened for append, before {@link #append} returns. Once the
 * call returned, the line is in the kernel's page cache, which a killed process cannot take back (a power loss could:
 * the demo does not simulate one, so it does not {@code fsync}). A kill during the call can leave a partial last line
 * without its newline; {@link #open} cuts it off, as a database rolls back a transaction that did not commit, and
 * {@link #readLines} ignores it.
 *
 * <h2>The payment-id key</h2>
 * A keyed book (the default) refuses a second line for a payment id it already holds, like a table with a unique key
 * on the payment id: the write of the effect and the record of its id are one step, so a crash can neither apply
 * the one without the other nor record an id whose credit never happened. This is what makes the
 * ledger exactly-once across a crash; the dedup window in front of it keeps every duplicate it can recognise away
 * from the book, so the key only ever refuses the few records that were in flight when the consumer was killed (see
 * {@code docs/demo.md}). An unkeyed book appends every line it is given, to show what happens without the key.
 *
 * <p>Thread-safe: {@link #append} is synchronized. One process at a time may append (the demo runs one consumer).
 */
public final class PaymentBook implements AutoCloseable {

  private final FileChannel channel;
  private final boolean keyed;
  private final Set<String> ids;

  private PaymentBook(FileChannel channel, boolean keyed, Set<String> ids) {
    this.channel = channel;
    this.keyed = keyed;
    this.ids = ids;
  }

  /**
   * Opens (creating if needed) a book: cuts a partial last line a killed writer left, and reads the payment ids of
   * the whole lines. O(size of the file).
   *
   * @param file the book's file
   * @param keyed whether a second line for a payment id is refused
   * @return the open book
   * @throws IOException if the file cannot be read, cut or opened
   */
  public static PaymentBook open(Path file, boolean keyed) throws IOException {
    Set<String> ids = new HashSet<>();
    FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
    try {
      byte[] bytes = Files.readAllBytes(file);
      int end = lastNewline(bytes) + 1;
      if (end < bytes.length) {
        channel.truncate(end);
      }
      for (String line : new String(bytes, 0, end, StandardCharsets.UTF_8).split("\n")) {
        if (!line.isEmpty()) {
          ids.add(line.substring(0, spaceOrEnd(line)));
        }
      }
      channel.close();
      channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    return new PaymentBook(channel, keyed, ids);
  }

  /**
   * Appends one line for a payment, unless the book is keyed and already holds one for its id. Blocking (one
   * {@code write(2)}, a few microseconds into the page cache): call it off the event loop.
   *
   * @param paymentId the payment id, the first field of the line
   * @param fields the other fields, joined with spaces; none may contain whitespace or a newline
   * @return true if the line was written, false if a keyed book refused it
   * @throws IOException if the write fails (the line may then be partial: the book must be reopened)
   */
  public synchronized boolean append(String paymentId, Object... fields) throws IOException {
    if (keyed && ids.contains(paymentId)) {
      return false;
    }
    StringBuilder line = new StringBuilder(paymentId);
    for (Object f : fields) {
      line.append(' ').append(f);
    }
    ByteBuffer buf = ByteBuffer.wrap(line.append('\n').toString().getBytes(StandardCharsets.UTF_8));
    while (buf.hasRemaining()) {
      channel.write(buf);
    }
    ids.add(paymentId);
    return true;
  }

  /** @return the number of distinct payment ids in the book */
  public synchronized int size() {
    return ids.size();
  }

  @Override
  public synchronized void close() throws IOException {
    channel.close();
  }

  /**
   * Reads the whole lines of a book (a partial last line is not a line), each split on spaces. O(size).
   *
   * @param file the book's file; a missing file reads as empty
   * @return the lines' fields, in file order
   * @throws IOException if the file cannot be read
   */
  public static List<String[]> readLines(Path file) throws IOException {
    List<String[]> lines = new ArrayList<>();
    if (!Files.exists(file)) {
      return lines;
    }
    byte[] bytes = Files.readAllBytes(file);
    int end = lastNewline(bytes) + 1;
    for (String line : new String(bytes, 0, end, StandardCharsets.UTF_8).split("\n")) {
      if (!line.isEmpty()) {
        lines.add(line.split(" "));
      }
    }
    return lines;
  }

  private static int lastNewline(byte[] bytes) {
    for (int i = bytes.length - 1; i >= 0; i--) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static int spaceOrEnd(String line) {
    int i = line.indexOf(' ');
    return i < 0 ? line.length() : i;
  }
}
