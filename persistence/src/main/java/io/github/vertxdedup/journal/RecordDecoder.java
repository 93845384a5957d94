package io.github.vertxdedup.journal;

import static io.github.vertxdedup.journal.RecordFormat.ACCEPT;
import static io.github.vertxdedup.journal.RecordFormat.CLAIM;
import static io.github.vertxdedup.journal.RecordFormat.CLAIM_FIXED_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.CLAIM_V1_FIXED_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.COMMIT;
import static io.github.vertxdedup.journal.RecordFormat.COMMIT_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.CRC_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_KEYS;
import static io.github.vertxdedup.journal.RecordFormat.FLAG_PAYLOADS;
import static io.github.vertxdedup.journal.RecordFormat.HEADER_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.INT;
import static io.github.vertxdedup.journal.RecordFormat.LONG;
import static io.github.vertxdedup.journal.RecordFormat.MIN_RECORD_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.NO_EXPIRY;
import static io.github.vertxdedup.journal.RecordFormat.OFFSETS;
import static io.github.vertxdedup.journal.RecordFormat.OFFSETS_FIXED_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.RELEASE;
import static io.github.vertxdedup.journal.RecordFormat.RELEASE_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.ROLL;
import static io.github.vertxdedup.journal.RecordFormat.ROLL_BYTES;
import static io.github.vertxdedup.journal.RecordFormat.SHORT;
import static io.github.vertxdedup.journal.RecordFormat.SNAPSHOT_END;
import static io.github.vertxdedup.journal.RecordFormat.SNAPSHOT_END_BYTES;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;
import net.openhft.chronicle.bytes.Bytes;

/**
 * Checks and decodes one record at a time (see {@link RecordFormat}) and hands its entries to a visitor. A record
 * is checked whole (length, checksum, entry sizes) before any entry is delivered, so a torn record delivers
 * nothing. Single-threaded; reuses its array and allocates only strings (claimer ids, topics).
 */
final class RecordDecoder {

  static final int OK = 0;
  static final int TORN = 1;
  static final int UNKNOWN_VERSION = 2;
  static final int UNKNOWN_TYPE = 3;

  private final CRC32C crc = new CRC32C();
  private byte[] buf = new byte[4096];
  private int len;

  /** Accepts expiring after this instant count as live. */
  long nowMs;

  // Results of the last decode.
  int version;
  int type;
  int flags;
  int count;
  /** Latest expiresAtMs of an accept or commit in the record, or NO_EXPIRY. */
  long maxExpiry;
  String tornReason;
  int rollCycle;
  int rollPreviousCycle;
  long rollPreviousMaxExpiry;
  long rollWrittenAtMs;

  // Running totals.
  long accepts;
  long liveIds;
  long claims;
  long commits;
  long releases;
  long offsetCommits;

  /** Copies an excerpt's bytes into the decoder; returns the record length. */
  int load(Bytes<?> bytes) {
    long remaining = bytes.readRemaining();
    if (remaining > Integer.MAX_VALUE - 16) {
      throw new IllegalStateException("journal record of " + remaining + " bytes is larger than any writer makes");
    }
    int n = (int) remaining;
    if (n > buf.length) {
      buf = new byte[Math.max(n, buf.length * 2)];
    }
    bytes.read(buf, 0, n);
    len = n;
    return n;
  }

  /** For tests: decode bytes given directly. */
  void load(byte[] record, int length) {
    if (length > buf.length) {
      buf = new byte[length];
    }
    System.arraycopy(record, 0, buf, 0, length);
    len = length;
  }

  long entries() {
    return accepts + claims + commits + releases + offsetCommits;
  }

  int decode(JournalVisitor visitor) {
    maxExpiry = NO_EXPIRY;
    tornReason = null;
    type = 0;
    final byte[] b = buf;
    final int n = len;
    if (n < MIN_RECORD_BYTES) {
      return torn("record of " + n + " bytes is shorter than the " + MIN_RECORD_BYTES + "-byte frame");
    }
    final int end = n - CRC_BYTES;
    crc.reset();
    crc.update(b, 0, end);
    int stored = (int) INT.get(b, end);
    if (stored != (int) crc.getValue()) {
      return torn("checksum mismatch (stored " + Integer.toHexString(stored) + ", computed "
          + Integer.toHexString((int) crc.getValue()) + ")");
    }
    version = b[0] & 0xFF;
    if (version < RecordFormat.OLDEST_READABLE_VERSION || version > RecordFormat.VERSION) {
      return UNKNOWN_VERSION;
    }
    type = b[1] & 0xFF;
    flags = (short) SHORT.get(b, 2) & 0xFFFF;
    count = (int) INT.get(b, 4);
    final int body = end - HEADER_BYTES;
    if (count < 1) {
      return torn(RecordFormat.typeName(type) + " record with entry count " + count);
    }
    switch (type) {
      case ACCEPT:
        return accept(visitor, body);
      case COMMIT:
        return commit(visitor, body);
      case RELEASE:
        return release(visitor, body);
      case CLAIM:
        return claim(visitor, end);
      case OFFSETS:
        return offsets(visitor, end);
      case ROLL:
        return roll(body);
      case SNAPSHOT_END:
        return single(body, SNAPSHOT_END_BYTES) ? OK : tornSize(body);
      default:
        return UNKNOWN_TYPE;
    }
  }

  private int accept(JournalVisitor v, int body) {
    final int entry = RecordFormat.acceptEntryBytes(flags);
    if ((long) count * entry != body) {
      return tornSize(body);
    }
    final boolean keys = (flags & FLAG_KEYS) != 0;
    final boolean payloads = (flags & FLAG_PAYLOADS) != 0;
    final byte[] b = buf;
    final long now = nowMs;
    long max = NO_EXPIRY;
    long live = 0;
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++) {
      long fingerprint = (long) LONG.get(b, p);
      p += 8;
      long key = 0;
      if (keys) {
        key = (long) LONG.get(b, p);
        p += 8;
      }
      long payload = 0;
      if (payloads) {
        payload = (long) LONG.get(b, p);
        p += 8;
      }
      long acceptedAt = (long) LONG.get(b, p);
      long expiresAt = (long) LONG.get(b, p + 8);
      p += 16;
      if (expiresAt > max) {
        max = expiresAt;
      }
      if (expiresAt > now) {
        live++;
      }
      v.onAccept(fingerprint, key, payload, acceptedAt, expiresAt);
    }
    maxExpiry = max;
    accepts += count;
    liveIds += live;
    return OK;
  }

  private int commit(JournalVisitor v, int body) {
    if (!fixedSize(body, COMMIT_BYTES)) {
      return tornSize(body);
    }
    final byte[] b = buf;
    long max = NO_EXPIRY;
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++, p += COMMIT_BYTES) {
      long expiresAt = (long) LONG.get(b, p + 16);
      max = Math.max(max, expiresAt);
      v.onCommit((long) LONG.get(b, p), (long) LONG.get(b, p + 8), expiresAt);
    }
    maxExpiry = max;
    commits += count;
    return OK;
  }

  private int release(JournalVisitor v, int body) {
    if (!fixedSize(body, RELEASE_BYTES)) {
      return tornSize(body);
    }
    final byte[] b = buf;
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++, p += RELEASE_BYTES) {
      v.onRelease((long) LONG.get(b, p), (long) LONG.get(b, p + 8));
    }
    releases += count;
    return OK;
  }

  private int claim(JournalVisitor v, int end) {
    if (version == 1) {
      return claimV1(v, end);
    }
    if (!variableSizesFit(end, CLAIM_FIXED_BYTES)) {
      return tornSize(end - HEADER_BYTES);
    }
    if (anyZeroFingerprint(CLAIM_FIXED_BYTES)) {
      return torn("CLAIM record with a fingerprint of 0, which no writer makes");
    }
    final byte[] b = buf;
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++) {
      int strLen = b[p + CLAIM_FIXED_BYTES - 1] & 0xFF;
      v.onClaim(new ClaimEntry((long) LONG.get(b, p), (long) LONG.get(b, p + 8), (long) LONG.get(b, p + 16),
          (long) LONG.get(b, p + 24), (long) LONG.get(b, p + 32), (long) LONG.get(b, p + 40),
          (long) LONG.get(b, p + 48), new String(b, p + CLAIM_FIXED_BYTES, strLen, StandardCharsets.UTF_8),
          version));
      p += CLAIM_FIXED_BYTES + strLen;
    }
    // A claim does not keep its cycle: while open it is carried into every new cycle (see RollSnapshotSource).
    claims += count;
    return OK;
  }

  /** A CLAIM record of format version 1: no payload hash, claim time or remember-until column (see RecordFormat). */
  private int claimV1(JournalVisitor v, int end) {
    if (!variableSizesFit(end, CLAIM_V1_FIXED_BYTES)) {
      return tornSize(end - HEADER_BYTES);
    }
    if (anyZeroFingerprint(CLAIM_V1_FIXED_BYTES)) {
      return torn("CLAIM record with a fingerprint of 0, which no writer makes");
    }
    final byte[] b = buf;
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++) {
      long fingerprint = (long) LONG.get(b, p);
      long key = (long) LONG.get(b, p + 8);
      long token = (long) LONG.get(b, p + 16);
      long leaseEnd = (long) LONG.get(b, p + 24);
      int strLen = b[p + 32] & 0xFF;
      String claimer = new String(b, p + CLAIM_V1_FIXED_BYTES, strLen, StandardCharsets.UTF_8);
      p += CLAIM_V1_FIXED_BYTES + strLen;
      v.onClaim(new ClaimEntry(fingerprint, key, 0, token, ClaimEntry.NOT_RECORDED, leaseEnd,
          ClaimEntry.NOT_RECORDED, claimer, 1));
    }
    // A claim does not keep its cycle: while open it is carried into every new cycle (see RollSnapshotSource).
    claims += count;
    return OK;
  }

  private int offsets(JournalVisitor v, int end) {
    if (!variableSizesFit(end, OFFSETS_FIXED_BYTES)) {
      return tornSize(end - HEADER_BYTES);
    }
    final byte[] b = buf;
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++) {
      int partition = (int) INT.get(b, p);
      long offset = (long) LONG.get(b, p + 4);
      int strLen = b[p + 12] & 0xFF;
      String topic = new String(b, p + OFFSETS_FIXED_BYTES, strLen, StandardCharsets.UTF_8);
      p += OFFSETS_FIXED_BYTES + strLen;
      v.onOffsetCommit(topic, partition, offset);
    }
    offsetCommits += count;
    return OK;
  }

  private int roll(int body) {
    if (!single(body, ROLL_BYTES)) {
      return tornSize(body);
    }
    final byte[] b = buf;
    rollCycle = (int) INT.get(b, HEADER_BYTES);
    rollPreviousCycle = (int) INT.get(b, HEADER_BYTES + 4);
    rollPreviousMaxExpiry = (long) LONG.get(b, HEADER_BYTES + 8);
    rollWrittenAtMs = (long) LONG.get(b, HEADER_BYTES + 16);
    return OK;
  }

  /** Entries of a fixed part plus a length-prefixed string: walk them and check they end exactly at {@code end}. */
  private boolean variableSizesFit(int end, int fixed) {
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++) {
      if (p + fixed > end) {
        return false;
      }
      p += fixed + (buf[p + fixed - 1] & 0xFF);
    }
    return p == end;
  }

  /** Entries whose sizes fit (checked first): is the leading fingerprint of any of them 0? */
  private boolean anyZeroFingerprint(int fixed) {
    int p = HEADER_BYTES;
    for (int i = 0; i < count; i++) {
      if ((long) LONG.get(buf, p) == 0) {
        return true;
      }
      p += fixed + (buf[p + fixed - 1] & 0xFF);
    }
    return false;
  }

  private boolean fixedSize(int body, int entry) {
    return (long) count * entry == body;
  }

  private boolean single(int body, int entry) {
    return count == 1 && body == entry;
  }

  private int tornSize(int body) {
    return torn(RecordFormat.typeName(type) + " record of " + count + " entries does not fit its " + body
        + " bytes");
  }

  private int torn(String reason) {
    tornReason = reason;
    return TORN;
  }

  /** For tests and tools: a copy of the record's bytes. */
  byte[] copy() {
    return Arrays.copyOf(buf, len);
  }
}
