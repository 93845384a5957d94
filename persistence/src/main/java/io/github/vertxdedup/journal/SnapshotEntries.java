package io.github.vertxdedup.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/*
 * The entries of a window snapshot, read where they lie in the file. A snapshot's ENTRIES blocks come first, right
 * after its 64-byte header, and every one but the last holds ENTRIES_PER_BLOCK (4,096) entries of 32 bytes (see
 * SnapshotFile): so entry i lies in block i >>> 12, at (i & 4095) * 32 after that block's 12-byte header, and block k
 * starts at HEADER + k * BLOCK_BYTES. The check of the file (SnapshotFile.check) verifies that layout; a file without
 * it gets no view.
 *
 * A MappedByteBuffer holds at most 2 GiB and a snapshot of 400 M entries is 13 GB, so the entries are mapped in
 * segments of 2^segmentBlocksShift whole blocks (at most 2^13 blocks, 1,073,872,896 bytes): entry i lies in segment
 * i >>> (12 + segmentBlocksShift), block (i >>> 12) & (2^segmentBlocksShift - 1) of it. No block straddles two
 * segments, so an access is two shifts, a mask, a multiply and one absolute read.
 *
 * Java 17 has no public way to unmap a buffer: a mapping ends when the garbage collector finds its buffer
 * unreachable. Linux keeps the pages of a mapped file that was deleted until then, so retention may delete the
 * snapshot meanwhile.
 */

/**
 * A read-only, random-access view of a checked window snapshot's entries, read in place from the file through
 * read-only memory mappings: what {@link JournalVisitor#onSnapshotEntriesInPlace} offers instead of delivering the
 * entries one by one.
 *
 * <p>Entry {@code i} ({@code 0 <= i < size()}) is the {@code i}-th the snapshot holds, in file order, which is table
 * order: ascending {@code fingerprint * 0x9E3779B97F4A7C15} (unsigned), entries of one fingerprint adjacent and in
 * journal order (see {@link JournalVisitor#onSnapshotEntries}). Each entry is as the snapshot's writer wrote it: an
 * id's or a key's fingerprint (never 0), its payload hash (or 0), its first-seen time and its remember-until time.
 * Some may have expired since the snapshot was written; the reader decides what to keep.
 *
 * <p>Every access is O(1), allocates nothing and reads the mapping with an absolute get (no shared position), so any
 * number of threads may read one view at once. The first read of a page may wait for the disk.
 *
 * <p>Lifetime: the mappings live until this object is unreachable (Java 17 cannot unmap a buffer on request); keep a
 * reference for as long as the entries are read, and drop it afterwards so the address space and page cache can be
 * reclaimed. The file may be deleted by retention meanwhile: Linux keeps a mapped file's pages until the mapping
 * ends. The file must not be rewritten in place (the journal never does).
 */
public final class SnapshotEntries {

  /** Blocks per mapping, as a power of two: 2^13 blocks of 131,088 bytes, just under 1 GiB per mapping. */
  static final int SEGMENT_BLOCKS_SHIFT = 13;

  private static final int BLOCK_ENTRIES_SHIFT = 12;
  private static final int ENTRY_SHIFT = 5;
  /** The bytes of a full ENTRIES block: header, 4,096 entries, checksum. */
  static final int BLOCK_BYTES = SnapshotFile.BLOCK_HEADER + SnapshotFile.ENTRIES_PER_BLOCK * SnapshotFile.ENTRY_BYTES
      + 4;

  private static final int FINGERPRINT = 0;
  private static final int PAYLOAD_HASH = 8;
  private static final int FIRST_SEEN = 16;
  private static final int EXPIRES_AT = 24;

  private final Path file;
  private final long size;
  private final long minFirstSeenMs;
  private final ByteBuffer[] segments;
  private final int segmentShift;
  private final int blockMask;

  private SnapshotEntries(Path file, long size, long minFirstSeenMs, ByteBuffer[] segments,
      int segmentBlocksShift) {
    this.file = file;
    this.size = size;
    this.minFirstSeenMs = minFirstSeenMs;
    this.segments = segments;
    this.segmentShift = BLOCK_ENTRIES_SHIFT + segmentBlocksShift;
    this.blockMask = (1 << segmentBlocksShift) - 1;
  }

  /**
   * Maps the entries of a snapshot file checked to have the in-place layout (see the comment at the top): its
   * ENTRIES blocks first, every one but the last full.
   *
   * @param file the snapshot file
   * @param size the entries it holds
   * @param minFirstSeenMs the earliest first-seen time among them, or {@link Long#MAX_VALUE} if none
   * @param segmentBlocksShift blocks per mapping as a power of two, 0 to {@link #SEGMENT_BLOCKS_SHIFT}
   * @throws IOException if the file cannot be opened or mapped, or is shorter than its entries
   */
  static SnapshotEntries map(Path file, long size, long minFirstSeenMs, int segmentBlocksShift) throws IOException {
    if (segmentBlocksShift < 0 || segmentBlocksShift > SEGMENT_BLOCKS_SHIFT) {
      throw new IllegalArgumentException("segmentBlocksShift must be in [0, " + SEGMENT_BLOCKS_SHIFT + "] but was "
          + segmentBlocksShift);
    }
    if (size < 0) {
      throw new IllegalArgumentException("size must be >= 0 but was " + size);
    }
    long blocks = (size + SnapshotFile.ENTRIES_PER_BLOCK - 1) >>> BLOCK_ENTRIES_SHIFT;
    long lastBlockEntries = size - ((blocks - 1) << BLOCK_ENTRIES_SHIFT);
    long end = blocks == 0 ? SnapshotFile.HEADER
        : SnapshotFile.HEADER + (blocks - 1) * BLOCK_BYTES + SnapshotFile.BLOCK_HEADER
            + lastBlockEntries * SnapshotFile.ENTRY_BYTES;
    long segmentBytes = (long) BLOCK_BYTES << segmentBlocksShift;
    int count = Math.toIntExact((blocks + (1L << segmentBlocksShift) - 1) >>> segmentBlocksShift);
    ByteBuffer[] segments = new ByteBuffer[count];
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      if (ch.size() < end) {
        throw new IOException("the file is " + ch.size() + " bytes, its entries end at " + end);
      }
      for (int s = 0; s < count; s++) {
        long from = SnapshotFile.HEADER + s * segmentBytes;
        long length = Math.min(segmentBytes, end - from);
        segments[s] = ch.map(FileChannel.MapMode.READ_ONLY, from, length).order(ByteOrder.LITTLE_ENDIAN);
      }
    }
    // The mappings outlive the channel (FileChannel.map): closing it releases the descriptor only.
    return new SnapshotEntries(file, size, minFirstSeenMs, segments, segmentBlocksShift);
  }

  /**
   * Returns the number of entries.
   *
   * @return the entries the snapshot holds, {@code >= 0}: those that expired since it was written included
   */
  public long size() {
    return size;
  }

  /**
   * Returns the fingerprint of entry {@code i}. O(1).
   *
   * @param i the entry's index, {@code 0 <= i < size()}
   * @return an id's or a key's fingerprint, never 0
   * @throws IndexOutOfBoundsException if {@code i} is out of range
   */
  public long fingerprint(long i) {
    return read(i, FINGERPRINT);
  }

  /**
   * Returns the payload hash of entry {@code i}. O(1).
   *
   * @param i the entry's index, {@code 0 <= i < size()}
   * @return the payload hash, or 0 if none
   * @throws IndexOutOfBoundsException if {@code i} is out of range
   */
  public long payloadHash(long i) {
    return read(i, PAYLOAD_HASH);
  }

  /**
   * Returns when entry {@code i} was first seen. O(1).
   *
   * @param i the entry's index, {@code 0 <= i < size()}
   * @return epoch milliseconds of the owner's clock
   * @throws IndexOutOfBoundsException if {@code i} is out of range
   */
  public long firstSeenMs(long i) {
    return read(i, FIRST_SEEN);
  }

  /**
   * Returns until when entry {@code i} is remembered (its remember-until). O(1).
   *
   * @param i the entry's index, {@code 0 <= i < size()}
   * @return epoch milliseconds of the owner's clock; may already have passed (the entry expired since the
   *     snapshot was written)
   * @throws IndexOutOfBoundsException if {@code i} is out of range
   */
  public long expiresAtMs(long i) {
    return read(i, EXPIRES_AT);
  }

  /**
   * Copies the entries {@code [from, from + count)} into {@code dst} as they lie in the file, four {@code long}s per
   * entry: fingerprint, payload hash, first seen, remember-until. Faster than the single accessors for a sequential
   * pass: a bulk copy per block (4,096 entries) instead of a checked read per field. Allocates a buffer view per
   * block; safe for concurrent callers.
   *
   * @param from the first entry's index
   * @param count the entries to copy, {@code >= 0}
   * @param dst receives them from index 0; at least {@code 4 * count} long
   * @throws IndexOutOfBoundsException if the range lies outside the entries or {@code dst} is too short
   */
  public void copyTo(long from, int count, long[] dst) {
    Objects.checkFromIndexSize(from, count, size);
    Objects.checkFromIndexSize(0, 4L * count, dst.length);
    int done = 0;
    while (done < count) {
      final long i = from + done;
      final int entry = (int) i & (SnapshotFile.ENTRIES_PER_BLOCK - 1);
      final int n = Math.min(count - done, SnapshotFile.ENTRIES_PER_BLOCK - entry);
      final ByteBuffer segment = segments[(int) (i >>> segmentShift)];
      final int block = (int) (i >>> BLOCK_ENTRIES_SHIFT) & blockMask;
      final int offset = block * BLOCK_BYTES + SnapshotFile.BLOCK_HEADER + (entry << ENTRY_SHIFT);
      segment.slice(offset, n << ENTRY_SHIFT).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(dst, 4 * done, 4 * n);
      done += n;
    }
  }

  /**
   * Returns the earliest first-seen time among the entries, expired ones included, taken when the file was
   * checked: what a visitor that received them one by one would have seen as their earliest
   * {@code acceptedAtMs}. O(1).
   *
   * @return epoch milliseconds of the owner's clock, or {@link Long#MAX_VALUE} if there are no entries
   */
  public long minFirstSeenMs() {
    return minFirstSeenMs;
  }

  /**
   * Returns the snapshot file the entries are mapped from. It may have been deleted since (see the type comment).
   *
   * @return the file's path
   */
  public Path file() {
    return file;
  }

  /** The number of mappings the entries are read through. */
  int segmentCount() {
    return segments.length;
  }

  private long read(long i, int field) {
    Objects.checkIndex(i, size);
    ByteBuffer segment = segments[(int) (i >>> segmentShift)];
    int block = (int) (i >>> BLOCK_ENTRIES_SHIFT) & blockMask;
    int entry = (int) i & (SnapshotFile.ENTRIES_PER_BLOCK - 1);
    return segment.getLong(block * BLOCK_BYTES + SnapshotFile.BLOCK_HEADER + (entry << ENTRY_SHIFT) + field);
  }

  @Override
  public String toString() {
    return "SnapshotEntries{" + file + ", size=" + size + ", segments=" + segments.length + "}";
  }
}
