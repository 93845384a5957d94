package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.SnapshotFile.BLOCK_HEADER;
import static io.github.vertxdedup.journal.SnapshotFile.BUFFER;
import static io.github.vertxdedup.journal.SnapshotFile.CLAIMS;
import static io.github.vertxdedup.journal.SnapshotFile.CYCLES;
import static io.github.vertxdedup.journal.SnapshotFile.END;
import static io.github.vertxdedup.journal.SnapshotFile.ENTRIES;
import static io.github.vertxdedup.journal.SnapshotFile.ENTRIES_PER_BLOCK;
import static io.github.vertxdedup.journal.SnapshotFile.ENTRY_BYTES;
import static io.github.vertxdedup.journal.SnapshotFile.HEADER;
import static io.github.vertxdedup.journal.SnapshotFile.ITEMS_PER_BLOCK;
import static io.github.vertxdedup.journal.SnapshotFile.MAGIC;
import static io.github.vertxdedup.journal.SnapshotFile.MAX_BLOCK;
import static io.github.vertxdedup.journal.SnapshotFile.OFFSETS;
import static io.github.vertxdedup.journal.SnapshotFile.VERSION;
import static io.github.vertxdedup.journal.SnapshotFile.blockChecksum;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Writes one snapshot, in the format {@link SnapshotFile} describes and reads, into a temporary file; {@link #finish}
 * completes the header and forces it to disk. One thread at a time.
 */
final class SnapshotFileWriter implements SnapshotOutput, AutoCloseable {

  private final Path file;
  private final FileChannel ch;
  private final ByteBuffer buf = ByteBuffer.allocateDirect(BUFFER).order(ByteOrder.LITTLE_ENDIAN);
  private final CRC32C crc = new CRC32C();
  /** The previous block's checksum (zero before the first): each block's checksum covers it. */
  private int chain;
  private byte type;
  private int blockStart = -1;
  private int count;
  private long entries;
  private long claims;
  private long offsets;
  private long coveredSinceMs = Long.MAX_VALUE;
  long bytes;

  SnapshotFileWriter(Path file) {
    this.file = file;
    try {
      this.ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
          StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the snapshot file " + file, e);
    }
    buf.position(HEADER); // the header is written last, at offset 0
  }

  @Override
  public void entry(long fingerprint, long payloadHash, long firstSeenMs, long expiresAtMs) {
    block(ENTRIES, ENTRY_BYTES, ENTRIES_PER_BLOCK);
    buf.putLong(fingerprint).putLong(payloadHash).putLong(firstSeenMs).putLong(expiresAtMs);
    count++;
    entries++;
  }

  @Override
  public void claim(ClaimEntry c) {
    byte[] claimer = c.claimerId().getBytes(StandardCharsets.UTF_8);
    block(CLAIMS, 57 + claimer.length, ITEMS_PER_BLOCK);
    buf.putLong(c.fingerprint()).putLong(c.keyFingerprint()).putLong(c.payloadHash()).putLong(c.token())
        .putLong(c.claimedAtMs()).putLong(c.leaseEndMs()).putLong(c.rememberUntilMs())
        .put((byte) claimer.length).put(claimer);
    count++;
    claims++;
  }

  @Override
  public void offset(String topic, int partition, long offset) {
    byte[] t = topic.getBytes(StandardCharsets.UTF_8);
    block(OFFSETS, 13 + t.length, ITEMS_PER_BLOCK);
    buf.putInt(partition).putLong(offset).put((byte) t.length).put(t);
    count++;
    offsets++;
  }

  @Override
  public void coveredSince(long earliestMs) {
    coveredSinceMs = Math.min(coveredSinceMs, earliestMs);
  }

  /** Opens a block of {@code type} unless the open one is of that type and has room for an item of this size. */
  private void block(byte t, int itemBytes, int maxItems) {
    if (blockStart >= 0 && (type != t || count == maxItems)) {
      endBlock();
    }
    if (blockStart < 0) {
      if (buf.remaining() < MAX_BLOCK) {
        flush();
      }
      type = t;
      count = 0;
      blockStart = buf.position();
      buf.put(t).put((byte) 0).put((byte) 0).put((byte) 0).putInt(0).putInt(0);
    }
  }

  private void endBlock() {
    int end = buf.position();
    buf.putInt(blockStart + 4, count);
    buf.putInt(blockStart + 8, end - blockStart - BLOCK_HEADER);
    ByteBuffer view = buf.duplicate();
    view.position(blockStart).limit(end);
    chain = blockChecksum(crc, chain, view);
    buf.putInt(chain);
    blockStart = -1;
  }

  private void flush() {
    buf.flip();
    try {
      while (buf.hasRemaining()) {
        bytes += ch.write(buf);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the snapshot file " + file, e);
    } finally {
      buf.clear();
    }
  }

  /**
   * Writes the cycle table and the end block, then the header, and forces the file to disk.
   *
   * @return the file's length in bytes
   */
  long finish(long position, long cycleMs, long ownerKey, long writtenAtMs, Map<Integer, Long> cycleMax) {
    if (blockStart >= 0) {
      endBlock();
    }
    long cycles = 0;
    for (Map.Entry<Integer, Long> e : cycleMax.entrySet()) {
      block(CYCLES, 12, ITEMS_PER_BLOCK);
      buf.putInt(e.getKey()).putLong(e.getValue());
      count++;
      cycles++;
    }
    if (blockStart >= 0) {
      endBlock();
    }
    block(END, 32, 1);
    buf.putLong(entries).putLong(claims).putLong(offsets).putLong(cycles);
    endBlock();
    flush();
    ByteBuffer h = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
    h.putLong(MAGIC).putInt(VERSION).putInt(0).putLong(position).putLong(cycleMs).putLong(ownerKey)
        .putLong(writtenAtMs).putLong(coveredSinceMs).putInt(chain);
    crc.reset();
    crc.update(h.array(), 0, 60);
    h.putInt((int) crc.getValue());
    h.flip();
    try {
      while (h.hasRemaining()) {
        ch.write(h, h.position());
        h.position(h.limit());
      }
      ch.force(true);
      return ch.size();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the snapshot file " + file, e);
    }
  }

  long entries() {
    return entries;
  }

  long claims() {
    return claims;
  }

  @Override
  public void close() {
    try {
      ch.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot close the snapshot file " + file, e);
    }
  }
}
