package io.github.vertxdedup.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/*
 * Puts a snapshot's live entries into table order before they reach the file: ascending by
 * fingerprint * 0x9E3779B97F4A7C15 (unsigned), which is the order of the home slots of a table indexed by the high
 * bits of that product (Fibonacci hashing, Knuth TAOCP vol. 3, 6.4; the window's FingerprintTable), whatever its
 * size. A restart that inserts the entries in this order walks the table from its first slot to its last instead of
 * taking a cache miss per entry. Entries of one fingerprint keep the order they came in (the sort is stable and runs
 * merge in arrival order), so the entry a restart keeps for a fingerprint, the first, is the one a replay of the
 * records keeps.
 *
 * Memory stays bounded whatever the window: entries are sorted in runs of RUN (LSD radix sort, stable), a full run is
 * written to a temporary file beside the snapshot, and the runs are merged at the end. Claims and offsets pass
 * after the entries, in the order they came.
 *
 * Single-threaded: the snapshot's thread.
 */
final class SortingOutput implements SnapshotOutput {

  static final long FIBONACCI = 0x9E3779B97F4A7C15L;
  /** Entries sorted in memory at once: 32 MiB of columns plus 20 MiB of sort scratch. */
  static final int RUN = 1 << 20;

  private final SnapshotFileWriter out;
  private final Path dir;
  private final String tempPrefix;
  // Columns grow by doubling up to RUN: a small snapshot allocates little.
  private long[] keys = new long[1024];
  private long[] hashes = new long[1024];
  private long[] firstSeen = new long[1024];
  private long[] expires = new long[1024];
  private int size;
  private int[] order = new int[0];
  private int[] scratch = new int[0];
  private final List<Path> runs = new ArrayList<>();
  private final List<Runnable> after = new ArrayList<>();

  private final int run;

  /**
   * @param out the snapshot file
   * @param dir where run files go (the journal directory)
   * @param tempPrefix the run files' name prefix; they end in {@link SnapshotFile#TEMP_SUFFIX}
   * @param run entries per run, at most {@link #RUN}
   */
  SortingOutput(SnapshotFileWriter out, Path dir, String tempPrefix, int run) {
    this.run = run;
    this.out = out;
    this.dir = dir;
    this.tempPrefix = tempPrefix;
  }

  /** The sort key: the table order, as a signed long (sign bit flipped, so signed order is unsigned order). */
  static long key(long fingerprint) {
    return (fingerprint * FIBONACCI) ^ Long.MIN_VALUE;
  }

  @Override
  public void entry(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    if (size == run) {
      spill();
    } else if (size == keys.length) {
      int n = Math.min(run, size * 2);
      keys = java.util.Arrays.copyOf(keys, n);
      hashes = java.util.Arrays.copyOf(hashes, n);
      firstSeen = java.util.Arrays.copyOf(firstSeen, n);
      expires = java.util.Arrays.copyOf(expires, n);
    }
    keys[size] = fingerprint;
    hashes[size] = payloadHash;
    firstSeen[size] = firstSeenMs;
    expires[size] = expiresAtMs;
    size++;
  }

  @Override
  public void claim(ClaimEntry claim) {
    after.add(() -> out.claim(claim));
  }

  @Override
  public void offset(String topic, int partition, long offset) {
    after.add(() -> out.offset(topic, partition, offset));
  }

  @Override
  public void coveredSince(long earliestMs) {
    out.coveredSince(earliestMs);
  }

  /** Writes the entries in table order, then the claims and offsets; deletes the run files. */
  void drain() {
    try {
      if (runs.isEmpty()) {
        sort();
        for (int i = 0; i < size; i++) {
          int j = order[i];
          out.entry(keys[j], hashes[j], firstSeen[j], expires[j]);
        }
      } else {
        if (size > 0) {
          spill();
        }
        merge();
      }
      for (Runnable r : after) {
        r.run();
      }
    } finally {
      deleteRuns();
    }
  }

  void deleteRuns() {
    for (Path p : runs) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        JournalQueue.LOG.warn("cannot delete the snapshot's run file " + p, e);
      }
    }
    runs.clear();
  }

  /** Stable LSD radix sort of {@code order[0, size)} by {@link #key} (the product, unsigned), 16 bits per pass. */
  private void sort() {
    int n = size;
    if (order.length < n) {
      order = new int[keys.length];
      scratch = new int[keys.length];
    }
    if (n == 0) {
      return;
    }
    long[] k = new long[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
      k[i] = keys[i] * FIBONACCI; // the radix passes compare digits unsigned: the product itself
    }
    int[] count = new int[1 << 16];
    int[] src = order;
    int[] dst = scratch;
    for (int shift = 0; shift < 64; shift += 16) {
      java.util.Arrays.fill(count, 0);
      for (int i = 0; i < n; i++) {
        count[(int) (k[src[i]] >>> shift) & 0xFFFF]++;
      }
      if (count[(int) (k[0] >>> shift) & 0xFFFF] == n) {
        continue; // every key has the same digit here: nothing moves
      }
      int sum = 0;
      for (int b = 0; b < count.length; b++) {
        int c = count[b];
        count[b] = sum;
        sum += c;
      }
      for (int i = 0; i < n; i++) {
        int j = src[i];
        dst[count[(int) (k[j] >>> shift) & 0xFFFF]++] = j;
      }
      int[] t = src;
      src = dst;
      dst = t;
    }
    order = src;
    scratch = dst;
  }

  private void spill() {
    sort();
    Path run = dir.resolve(tempPrefix + "-run" + runs.size() + SnapshotFile.TEMP_SUFFIX);
    runs.add(run);
    ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    try (FileChannel ch = FileChannel.open(run, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE)) {
      for (int i = 0; i < size; i++) {
        if (buf.remaining() < SnapshotFile.ENTRY_BYTES) {
          write(ch, buf);
        }
        int j = order[i];
        buf.putLong(keys[j]).putLong(hashes[j]).putLong(firstSeen[j]).putLong(expires[j]);
      }
      write(ch, buf);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the snapshot's run file " + run, e);
    }
    size = 0;
  }

  private static void write(FileChannel ch, ByteBuffer buf) throws IOException {
    buf.flip();
    while (buf.hasRemaining()) {
      ch.write(buf);
    }
    buf.clear();
  }

  /** Merges the run files by key; a tie goes to the earlier run (arrival order). */
  private void merge() {
    List<Cursor> cursors = new ArrayList<>();
    PriorityQueue<Cursor> heap = new PriorityQueue<>((a, b) -> a.key != b.key ? Long.compare(a.key, b.key)
        : Integer.compare(a.run, b.run));
    try {
      for (int r = 0; r < runs.size(); r++) {
        Cursor c = new Cursor(runs.get(r), r);
        cursors.add(c);
        if (c.next()) {
          heap.add(c);
        }
      }
      while (!heap.isEmpty()) {
        Cursor c = heap.poll();
        out.entry(c.fingerprint, c.hash, c.firstSeen, c.expires);
        if (c.next()) {
          heap.add(c);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the snapshot's run files in " + dir, e);
    } finally {
      for (Cursor c : cursors) {
        c.close();
      }
    }
  }

  /** Reads one run file in order. */
  private static final class Cursor {
    final FileChannel ch;
    final int run;
    final ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024).order(ByteOrder.LITTLE_ENDIAN);
    long key;
    long fingerprint;
    long hash;
    long firstSeen;
    long expires;

    Cursor(Path file, int run) throws IOException {
      this.ch = FileChannel.open(file, StandardOpenOption.READ);
      this.run = run;
      buf.limit(0);
    }

    boolean next() throws IOException {
      if (buf.remaining() < SnapshotFile.ENTRY_BYTES) {
        buf.compact();
        while (buf.position() < SnapshotFile.ENTRY_BYTES) {
          if (ch.read(buf) < 0) {
            buf.flip();
            return false;
          }
        }
        buf.flip();
      }
      fingerprint = buf.getLong();
      hash = buf.getLong();
      firstSeen = buf.getLong();
      expires = buf.getLong();
      key = key(fingerprint);
      return true;
    }

    void close() {
      try {
        ch.close();
      } catch (IOException e) {
        // read only: nothing to lose
      }
    }
  }
}
