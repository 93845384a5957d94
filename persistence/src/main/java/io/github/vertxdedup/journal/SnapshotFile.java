package io.github.vertxdedup.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/*
 * One window snapshot file: what a journal's records up to a position amount to, written sequentially and read
 * sequentially. Little-endian throughout.
 *
 * Header, 64 bytes:
 *   0  magic 8 ("VDSNAP" 0x00 0x01 read as a long)
 *   8  format version 4 (2; version 1 is still read)
 *  12  zero 4
 *  16  position 8: the journal index of the last record covered
 *  24  roll cycle length 8, ms: indexes mean nothing under another roll cycle
 *  32  owner key 8 (the service's windowMs): what a record means depends on it
 *  40  written at 8, epoch ms of the owner's clock
 *  48  covered since 8, epoch ms (Long.MAX_VALUE: nothing)
 *  56  chain 4: the end block's checksum
 *  60  CRC32C of bytes [0, 60) 4
 * Blocks, each: type 1, zero 3, count 4, payload length 4, payload, checksum 4: the CRC32C of the previous block's
 * checksum (4 bytes, little-endian; zero before the first block) followed by the block from its type to its
 * payload's end. The checksums chain the blocks in their order, and the header's chain names the last: a block
 * moved, copied over another, dropped or taken from another file breaks the chain even though each block is whole.
 * Version 1 differs only there: each block's CRC32C covers the block alone, the header's CRC32C covers [0, 56) and is
 * at 56, and bytes 60-63 are zero; such a file is still read, with those (weaker) checks.
 *   1 ENTRIES  count x (fingerprint 8, payload hash 8, first seen 8, expires at 8), in table order over the whole
 *              file (SortingOutput)
 *   2 CLAIMS   count x (fingerprint 8, key 8, payload hash 8, token 8, claimed at 8, lease end 8, remember until 8,
 *              claimer length 1, claimer UTF-8)
 *   3 OFFSETS  count x (partition 4, offset 8, topic length 1, topic UTF-8)
 *   4 CYCLES   count x (cycle 4, latest expiry 8) of the records read up to the position, per cycle
 *   5 END      count 0, payload (entries 8, claims 8, offsets 8, cycles 8): the totals, so that a file cut at a
 *              block boundary is not taken for complete
 * Nothing follows END. A file is usable only if every checksum and the totals hold; it is written under a
 * temporary name, forced to disk and renamed, so a crash leaves a temporary file (deleted at the next open) and never
 * a half file under the final name; the checksums catch what the disk damages afterwards.
 *
 * The writer ({@link SnapshotFileWriter}) puts the ENTRIES blocks first, each full (ENTRIES_PER_BLOCK) but the last,
 * so entry i lies at a place arithmetic finds. The check records whether a file has that layout; only then are its
 * entries offered in place (SnapshotEntries), and a delivery to a visitor that took them starts its scan after them.
 */
final class SnapshotFile {

  static final long MAGIC = 0x0100_5041_4E53_4456L; // "VDSNAP", 0, 1 in little-endian order
  static final int VERSION = 2;
  /** The format whose block checksums do not chain (no chain in the header); still read. */
  static final int VERSION_UNCHAINED = 1;
  static final int HEADER = 64;
  static final String PREFIX = "snapshot-";
  static final String SUFFIX = ".snap";
  static final String TEMP_SUFFIX = ".snap.tmp";

  static final byte ENTRIES = 1;
  static final byte CLAIMS = 2;
  static final byte OFFSETS = 3;
  static final byte CYCLES = 4;
  static final byte END = 5;

  static final int BLOCK_HEADER = 12;
  static final int ENTRY_BYTES = 32;
  /** Entries per ENTRIES block: 128 KiB of payload. */
  static final int ENTRIES_PER_BLOCK = 4096;
  /** Claims or offsets per block: at most about 320 KiB with the longest claimer ids. */
  static final int ITEMS_PER_BLOCK = 1024;
  static final int MAX_BLOCK = BLOCK_HEADER + ITEMS_PER_BLOCK * (56 + 1 + 255) + 4;
  static final int BUFFER = 1 << 20;

  private SnapshotFile() {
  }

  /** The file name of the snapshot at {@code position}: the position in 16 hex digits, so names sort by it. */
  static String name(long position) {
    return PREFIX + String.format("%016x", position) + SUFFIX;
  }

  /** @return the position a snapshot file's name holds, or {@link Journal#NO_INDEX} if it is no snapshot's name */
  static long positionOf(String fileName) {
    if (!fileName.startsWith(PREFIX) || !fileName.endsWith(SUFFIX) || fileName.endsWith(TEMP_SUFFIX)) {
      return Journal.NO_INDEX;
    }
    String hex = fileName.substring(PREFIX.length(), fileName.length() - SUFFIX.length());
    if (hex.length() != 16) {
      return Journal.NO_INDEX;
    }
    try {
      return Long.parseUnsignedLong(hex, 16);
    } catch (NumberFormatException e) {
      return Journal.NO_INDEX;
    }
  }

  // ------------------------------------------------------------------------------------------------------- read

  /** Why a snapshot file cannot be used; the message says where and what. */
  static final class Damaged extends Exception {
    Damaged(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * A snapshot file checked whole: every checksum and the totals hold. {@link #deliver} reads it again, checking
   * each block again as it goes, and skips the entries blocks if the visitor takes them in place.
   */
  static final class Loaded {
    private final Path file;
    private final long position;
    private final long coveredSinceMs;
    private final long entries;
    private final Map<Integer, Long> cycleMax;
    /** Whether the entries blocks come first, each full but the last (see the comment at the top). */
    private final boolean inPlace;
    /** The file offset right after the last entries block, if {@link #inPlace}. */
    private final long entriesEnd;
    private final long minFirstSeenMs;
    private final boolean chained;
    /** The checksum of the last entries block, from which a scan that starts after them chains. */
    private final int chainAtEntriesEnd;
    /** The header's chain: the end block's checksum. */
    private final int chainEnd;

    private Loaded(Path file, long position, long coveredSinceMs, boolean chained, int chainEnd, Scan s) {
      this.file = file;
      this.position = position;
      this.coveredSinceMs = coveredSinceMs;
      this.entries = s.entries;
      this.cycleMax = Collections.unmodifiableMap(s.cycleMax);
      this.inPlace = s.inPlace;
      this.entriesEnd = s.entriesEnd;
      this.minFirstSeenMs = s.minFirstSeenMs;
      this.chained = chained;
      this.chainAtEntriesEnd = s.chainAtEntriesEnd;
      this.chainEnd = chainEnd;
    }

    Path file() {
      return file;
    }

    long position() {
      return position;
    }

    long entries() {
      return entries;
    }

    Map<Integer, Long> cycleMaxExpiry() {
      return cycleMax;
    }

    /** Whether the entries can be offered in place ({@link SnapshotEntries}). */
    boolean inPlace() {
      return inPlace;
    }

    /**
     * Hands the content to {@code v}: {@link JournalVisitor#onSnapshot}; then, if the file has the in-place layout,
     * {@link JournalVisitor#onSnapshotEntriesInPlace}; then the entries (unless the visitor took them in place),
     * claims and offsets.
     */
    void deliver(JournalVisitor v) {
      deliver(v, SnapshotEntries.SEGMENT_BLOCKS_SHIFT);
    }

    /** {@link #deliver(JournalVisitor)} with {@code 2^segmentBlocksShift} blocks per mapping of the entries. */
    void deliver(JournalVisitor v, int segmentBlocksShift) {
      v.onSnapshot(position, coveredSinceMs);
      boolean taken = false;
      if (inPlace) {
        SnapshotEntries view = null;
        try {
          view = SnapshotEntries.map(file, entries, minFirstSeenMs, segmentBlocksShift);
        } catch (IOException e) {
          // No view: the entries are delivered one by one, as from a file without the layout. The scan below
          // reports a file that cannot be read at all.
        }
        taken = view != null && v.onSnapshotEntriesInPlace(view);
      }
      try {
        Scan s;
        if (taken) {
          // The check pass verified the entries blocks: seek past them, chaining from the last one's checksum.
          s = scan(file, v, entriesEnd, entries, chained, chainAtEntriesEnd);
        } else {
          v.onSnapshotEntries(entries);
          s = scan(file, v, HEADER, 0, chained, 0);
        }
        if (chained && s.chain != chainEnd) {
          throw new Damaged("the blocks' checksum chain no longer ends where the header said");
        }
      } catch (Damaged e) {
        throw new JournalException("snapshot " + file + " changed while it was read: " + e.getMessage(), null);
      }
    }
  }

  /**
   * Reads and checks a snapshot file whole.
   *
   * @param cycleMs the journal's roll cycle length: a snapshot of another is not used
   * @param ownerKey the owner's key: a snapshot written under another is not used
   * @throws Damaged if anything does not hold; the message says what
   */
  static Loaded check(Path file, long cycleMs, long ownerKey) throws Damaged {
    Header h = header(file);
    if (h.cycleMs != cycleMs) {
      throw new Damaged("written under a roll cycle of " + h.cycleMs + " ms, the journal's is " + cycleMs + " ms");
    }
    if (h.ownerKey != ownerKey) {
      throw new Damaged("written for window " + h.ownerKey + " ms, the owner's is " + ownerKey + " ms");
    }
    boolean chained = h.version != VERSION_UNCHAINED;
    Scan s = scan(file, null, HEADER, 0, chained, 0);
    if (chained && s.chain != h.chain) {
      throw new Damaged("the blocks' checksum chain does not end where the header says (a block is moved, missing or"
          + " from another file)");
    }
    return new Loaded(file, h.position, h.coveredSinceMs, chained, h.chain, s);
  }

  /**
   * A block's checksum: the CRC32C of {@code previous} (4 bytes, little-endian) and then the block from its type to its
   * payload's end ({@code block}'s remaining bytes); with {@code previous} ignored in the unchained version 1.
   */
  static int blockChecksum(CRC32C crc, int previous, ByteBuffer block) {
    crc.reset();
    crc.update(previous);
    crc.update(previous >>> 8);
    crc.update(previous >>> 16);
    crc.update(previous >>> 24);
    crc.update(block);
    return (int) crc.getValue();
  }

  private static int unchainedChecksum(CRC32C crc, ByteBuffer block) {
    crc.reset();
    crc.update(block);
    return (int) crc.getValue();
  }

  private record Header(int version, long position, long cycleMs, long ownerKey, long coveredSinceMs, int chain) {
  }

  private static Header header(Path file) throws Damaged {
    ByteBuffer h = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      while (h.hasRemaining()) {
        if (ch.read(h) < 0) {
          throw new Damaged("shorter than its header (" + h.position() + " bytes)");
        }
      }
    } catch (IOException e) {
      throw new Damaged("cannot be read: " + e);
    }
    if (h.getLong(0) != MAGIC) {
      throw new Damaged("not a snapshot file (magic " + Long.toHexString(h.getLong(0)) + ")");
    }
    int version = h.getInt(8);
    if (version != VERSION && version != VERSION_UNCHAINED) {
      // A damaged version field lands here or fails the checksum below under the other version's layout.
      throw new Damaged("format version " + version + ", this reader knows " + VERSION_UNCHAINED + " and " + VERSION);
    }
    CRC32C crc = new CRC32C();
    if (version == VERSION_UNCHAINED) {
      crc.update(h.array(), 0, 56);
      if (h.getInt(56) != (int) crc.getValue()) {
        throw new Damaged("header checksum mismatch");
      }
      if (h.getInt(60) != 0) {
        // Outside version 1's header checksum: its writer put zero there, so anything else is damage.
        throw new Damaged("header bytes [60, 64) are " + Integer.toHexString(h.getInt(60)) + ", must be zero");
      }
      return new Header(version, h.getLong(16), h.getLong(24), h.getLong(32), h.getLong(48), 0);
    }
    crc.update(h.array(), 0, 60);
    if (h.getInt(60) != (int) crc.getValue()) {
      throw new Damaged("header checksum mismatch");
    }
    return new Header(version, h.getLong(16), h.getLong(24), h.getLong(32), h.getLong(48), h.getInt(56));
  }

  private static final class Scan {
    long entries;
    long claims;
    long offsets;
    final TreeMap<Integer, Long> cycleMax = new TreeMap<>();
    /** The earliest first seen among the entries (the check pass only). */
    long minFirstSeenMs = Long.MAX_VALUE;
    /** Whether every block so far is an entries block, each full but the last (the in-place layout). */
    boolean inPlace = true;
    /** The file offset after the last entries block. */
    long entriesEnd = HEADER;
    /** The checksum of the last block read (chained files). */
    int chain;
    /** The checksum of the last entries block (zero if none). */
    int chainAtEntriesEnd;
  }

  /**
   * Reads every block from file offset {@code from} (the header's end, or the end of the entries blocks when the
   * visitor took them in place, {@code entriesBefore} being their count); checks each, delivers to {@code v} if not
   * null, and the check pass ({@code v} null) records the in-place layout.
   *
   * @param chained whether the block checksums chain (version 2), from {@code chain}: the checksum of the block
   *     before {@code from}, zero at the header's end
   */
  private static Scan scan(Path file, JournalVisitor v, long from, long entriesBefore, boolean chained, int chain)
      throws Damaged {
    Scan s = new Scan();
    s.entries = entriesBefore;
    s.chain = chain;
    CRC32C crc = new CRC32C();
    ByteBuffer buf = ByteBuffer.allocateDirect(BUFFER + MAX_BLOCK).order(ByteOrder.LITTLE_ENDIAN);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ch.position(from);
      buf.limit(0);
      boolean ended = false;
      long offset = from; // the file offset of the block read next
      boolean leading = true; // every block so far is an entries block
      int lastEntries = ENTRIES_PER_BLOCK;
      while (true) {
        if (!fill(ch, buf, BLOCK_HEADER)) {
          if (buf.remaining() == 0 && ended) {
            return s;
          }
          throw new Damaged(ended ? "bytes after the end block" : "cut short: no end block");
        }
        if (ended) {
          throw new Damaged("bytes after the end block");
        }
        int start = buf.position();
        byte type = buf.get(start);
        int count = buf.getInt(start + 4);
        int length = buf.getInt(start + 8);
        if (type < ENTRIES || type > END || count < 0 || length < 0 || length > MAX_BLOCK - BLOCK_HEADER - 4) {
          throw new Damaged("a block header is damaged (type " + type + ", count " + count + ", length " + length
              + ")");
        }
        if (!fill(ch, buf, BLOCK_HEADER + length + 4)) {
          throw new Damaged("cut short inside a block");
        }
        start = buf.position();
        ByteBuffer view = buf.duplicate();
        view.position(start).limit(start + BLOCK_HEADER + length);
        int sum = chained ? blockChecksum(crc, s.chain, view) : unchainedChecksum(crc, view);
        if (buf.getInt(start + BLOCK_HEADER + length) != sum) {
          throw new Damaged(chained ? "block checksum mismatch (the block, or its place in the chain)"
              : "block checksum mismatch");
        }
        s.chain = sum;
        buf.position(start + BLOCK_HEADER);
        int payloadEnd = start + BLOCK_HEADER + length;
        decode(buf, type, count, payloadEnd, s, v);
        if (buf.position() != payloadEnd) {
          throw new Damaged("a block's items do not fill it");
        }
        buf.position(payloadEnd + 4);
        offset += BLOCK_HEADER + length + 4;
        if (type == ENTRIES) {
          if (!leading || lastEntries != ENTRIES_PER_BLOCK || count == 0 || count > ENTRIES_PER_BLOCK) {
            s.inPlace = false;
          }
          lastEntries = count;
          s.entriesEnd = offset;
          s.chainAtEntriesEnd = sum;
        } else {
          leading = false;
        }
        ended = type == END;
      }
    } catch (IOException e) {
      throw new Damaged("cannot be read: " + e);
    } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
      throw new Damaged("a block's items overrun it");
    }
  }

  private static void decode(ByteBuffer b, byte type, int count, int end, Scan s, JournalVisitor v)
      throws Damaged {
    switch (type) {
      case ENTRIES -> {
        if ((long) count * ENTRY_BYTES != end - b.position()) {
          throw new Damaged("an entries block's length does not match its count");
        }
        if (v == null) {
          // The check pass: the checksum covered them; only their earliest first seen is kept.
          long min = s.minFirstSeenMs;
          for (int p = b.position() + 16; p < end; p += ENTRY_BYTES) {
            min = Math.min(min, b.getLong(p));
          }
          s.minFirstSeenMs = min;
          b.position(end);
        } else {
          for (int i = 0; i < count; i++) {
            long fp = b.getLong();
            long hash = b.getLong();
            long firstSeen = b.getLong();
            long expires = b.getLong();
            v.onAccept(fp, 0, hash, firstSeen, expires);
          }
        }
        s.entries += count;
      }
      case CLAIMS -> {
        for (int i = 0; i < count; i++) {
          long fp = b.getLong();
          long key = b.getLong();
          long hash = b.getLong();
          long token = b.getLong();
          long claimedAt = b.getLong();
          long leaseEnd = b.getLong();
          long rememberUntil = b.getLong();
          String claimer = text(b, end);
          if (v != null) {
            v.onClaim(ClaimEntry.of(fp, key, hash, token, claimedAt, leaseEnd, rememberUntil, claimer));
          }
        }
        s.claims += count;
      }
      case OFFSETS -> {
        for (int i = 0; i < count; i++) {
          int partition = b.getInt();
          long offset = b.getLong();
          String topic = text(b, end);
          if (v != null) {
            v.onOffsetCommit(topic, partition, offset);
          }
        }
        s.offsets += count;
      }
      case CYCLES -> {
        for (int i = 0; i < count; i++) {
          s.cycleMax.put(b.getInt(), b.getLong());
        }
      }
      default -> { // END
        if (count != 0 || end - b.position() != 32) {
          throw new Damaged("the end block is damaged");
        }
        long entries = b.getLong();
        long claims = b.getLong();
        long offsets = b.getLong();
        long cycles = b.getLong();
        if (entries != s.entries || claims != s.claims || offsets != s.offsets || cycles != s.cycleMax.size()) {
          throw new Damaged("the totals do not match the blocks (a block is missing)");
        }
      }
    }
    if (b.position() > end) {
      throw new Damaged("a block's items overrun it");
    }
  }

  private static String text(ByteBuffer b, int end) throws Damaged {
    int n = b.get() & 0xFF;
    if (b.position() + n > end) {
      throw new Damaged("a block's items overrun it");
    }
    byte[] t = new byte[n];
    b.get(t);
    return new String(t, StandardCharsets.UTF_8);
  }

  /** Makes at least {@code n} bytes readable from the buffer's position; false at the end of the file. */
  private static boolean fill(FileChannel ch, ByteBuffer buf, int n) throws IOException {
    if (buf.remaining() >= n) {
      return true;
    }
    buf.compact();
    while (buf.position() < n) {
      if (ch.read(buf) < 0) {
        buf.flip();
        return false;
      }
    }
    buf.flip();
    return true;
  }
}
