package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.RecordFormat.CRC_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.HEADER_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.INT;
import static io.github.vertxdedup.journal.RecordFormat.LONG;
import static io.github.vertxdedup.journal.RecordFormat.SHORT;

import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Builds one record at a time in a reusable array (see {@link RecordFormat}). Single-threaded; allocates only when a
 * record outgrows the array.
 */
final class RecordEncoder {

  private final CRC32C crc = new CRC32C();
  private byte[] buf = new byte[1024];
  private int pos;

  void begin(int type, int flags, int count) {
    pos = 0;
    ensure(HEADER_BYTES);
    buf[0] = (byte) RecordFormat.VERSION;
    buf[1] = (byte) type;
    SHORT.set(buf, 2, (short) flags);
    INT.set(buf, 4, count);
    pos = HEADER_BYTES;
  }

  void count(int count) {
    INT.set(buf, 4, count);
  }

  int entryBytes() {
    return pos - HEADER_BYTES;
  }

  void putLong(long v) {
    ensure(8);
    LONG.set(buf, pos, v);
    pos += 8;
  }

  void putInt(int v) {
    ensure(4);
    INT.set(buf, pos, v);
    pos += 4;
  }

  /** Writes a length byte and the bytes; the caller has checked {@code utf8.length <= 255}. */
  void putShortString(byte[] utf8) {
    ensure(1 + utf8.length);
    buf[pos++] = (byte) utf8.length;
    System.arraycopy(utf8, 0, buf, pos, utf8.length);
    pos += utf8.length;
  }

  /** Writes one CLAIM entry in the current format; {@code claimer} is {@code c}'s claimer id in UTF-8. */
  void putClaim(ClaimEntry c, byte[] claimer) {
    putLong(c.fingerprint());
    putLong(c.keyFingerprint());
    putLong(c.payloadHash());
    putLong(c.token());
    putLong(c.claimedAtMs());
    putLong(c.leaseEndMs());
    putLong(c.rememberUntilMs());
    putShortString(claimer);
  }

  /** Writes one OFFSETS entry; {@code topic} is the topic in UTF-8 (validated by {@link OffsetCommit}). */
  void putOffset(byte[] topic, int partition, long offset) {
    putInt(partition);
    putLong(offset);
    putShortString(topic);
  }

  void putAccepts(AcceptBatch b, int flags) {
    boolean keys = (flags & RecordFormat.FLAG_KEYS) != 0;
    boolean payloads = (flags & RecordFormat.FLAG_PAYLOADS) != 0;
    int n = b.size;
    ensure(n * RecordFormat.acceptEntryBytes(flags));
    byte[] a = buf;
    int p = pos;
    for (int i = 0; i < n; i++) {
      LONG.set(a, p, b.fingerprints[i]);
      p += 8;
      if (keys) {
        LONG.set(a, p, b.keyFingerprints[i]);
        p += 8;
      }
      if (payloads) {
        LONG.set(a, p, b.payloadHashes[i]);
        p += 8;
      }
      LONG.set(a, p, b.acceptedAtMs[i]);
      LONG.set(a, p + 8, b.expiresAtMs[i]);
      p += 16;
    }
    pos = p;
  }

  /** Appends the checksum; returns the record's length. */
  int finish() {
    ensure(CRC_BYTES);
    crc.reset();
    crc.update(buf, 0, pos);
    INT.set(buf, pos, (int) crc.getValue());
    pos += CRC_BYTES;
    return pos;
  }

  byte[] buffer() {
    return buf;
  }

  int length() {
    return pos;
  }

  private void ensure(int more) {
    if (pos + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + more + CRC_BYTES));
    }
  }
}
