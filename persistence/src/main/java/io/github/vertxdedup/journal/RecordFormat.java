package io.github.vertxdedup.journal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/*
 * The journal's record format, version 2. One record is one Chronicle Queue excerpt; Chronicle frames it with a
 * 4-byte header holding its length and a "not complete" bit, so a reader knows where a record ends. Inside, all
 * little-endian:
 *
 *   offset  size  field
 *   0       1     format version (2; 1 is still read)      } these two rules hold for every version, so a reader
 *   n-4     4     CRC32C of bytes [0, n-4)                 } can tell "unknown version" from "damaged record"
 *   1       1     type
 *   2       2     flags
 *   4       4     entry count, >= 1
 *   8       ...   entries; their sizes must add up to exactly n - 12
 *
 * Types and entries:
 *   1 ACCEPT   fingerprint 8, [key fingerprint 8 if flag KEYS], [payload hash 8 if flag PAYLOADS],
 *              acceptedAtMs 8, expiresAtMs 8                  (a batch of accepts is one record: group commit)
 *   2 CLAIM    fingerprint 8, key fingerprint 8, payload hash 8, token 8, claimedAtMs 8, leaseEndMs 8,
 *              rememberUntilMs 8 (Long.MIN_VALUE: the owner's default), claimer length 1, claimer UTF-8
 *   3 COMMIT   fingerprint 8, token 8, expiresAtMs 8
 *   4 RELEASE  fingerprint 8, token 8
 *   5 OFFSETS  partition 4, offset 8, topic length 1, topic UTF-8
 *   6 ROLL     cycle 4, previous cycle 4 (-1 if none), previous cycle's max expiry 8, written at (ms) 8
 *   7 SNAPSHOT_END  claims 4, offsets 4                    (ends the snapshot a ROLL starts; count is 1)
 * Flag CARRIED (bit 0) marks CLAIM and OFFSETS records written by a roll snapshot.
 *
 * Version 1 differs only in CLAIM: fingerprint 8, key fingerprint 8, token 8, leaseEndMs 8, claimer length 1,
 * claimer UTF-8. Its claimer text was the only free column, so 0.1.0-SNAPSHOT's service stored the claim time, the
 * payload hash and the remember-until in it as text, and had no room for who claimed. Version 2 gives each its
 * column and leaves the claimer text to the claimer's id (a consumer's instance id, so a restarted consumer can
 * release its own orphaned claims). A version-2 writer appends version-2 records after version-1 ones in the same
 * journal; a reader reads both, record by record. A version-1 reader stops at the first version-2 record with
 * UnknownFormatVersionException rather than misreading it.
 *
 * A record that is too short, whose entries do not fill it exactly, or whose checksum does not match is "torn":
 * a crash or an I/O error cut it, or the disk damaged it. A checksum catches every torn record that Chronicle's
 * framing lets through: an all-zero tail of pre-allocated space, a file truncated inside the record (the mapping
 * reads zeroes past the end), a flipped bit. CRC32C is the Castagnoli polynomial (RFC 3720), computed by
 * java.util.zip.CRC32C, an intrinsic on x86 and ARM.
 *
 * The previous cycle's max expiry in a ROLL record is the latest expiresAtMs of any accept or commit in the cycle
 * before, or Long.MIN_VALUE if it held none, or Long.MAX_VALUE if the writer did not know it. Claims do not count:
 * a claim still open at a roll is carried into the new cycle by the owner's snapshot.
 */
final class RecordFormat {

  /** The version every record is written with. */
  static final int VERSION = 2;
  /** The oldest version a reader still decodes. */
  static final int OLDEST_READABLE_VERSION = 1;

  static final int HEADER_BYTES = 8;
  static final int CRC_BYTES = 4;
  static final int MIN_RECORD_BYTES = HEADER_BYTES + CRC_BYTES;

  static final int ACCEPT = 1;
  static final int CLAIM = 2;
  static final int COMMIT = 3;
  static final int RELEASE = 4;
  static final int OFFSETS = 5;
  static final int ROLL = 6;
  static final int SNAPSHOT_END = 7;

  static final int FLAG_CARRIED = 1;
  static final int FLAG_KEYS = 2;
  static final int FLAG_PAYLOADS = 4;

  static final int COMMIT_BYTES = 24;
  static final int RELEASE_BYTES = 16;
  static final int ROLL_BYTES = 24;
  static final int SNAPSHOT_END_BYTES = 8;
  static final int CLAIM_FIXED_BYTES = 57;
  static final int CLAIM_V1_FIXED_BYTES = 33;
  static final int OFFSETS_FIXED_BYTES = 13;

  /** A ROLL record's "the previous cycle held no entry with an expiry". */
  static final long NO_EXPIRY = Long.MIN_VALUE;
  /** A ROLL record's "the writer did not know the previous cycle's max expiry": keep and read that cycle. */
  static final long UNKNOWN_EXPIRY = Long.MAX_VALUE;

  static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);

  private RecordFormat() {
  }

  static int acceptEntryBytes(int flags) {
    return 24 + ((flags & FLAG_KEYS) != 0 ? 8 : 0) + ((flags & FLAG_PAYLOADS) != 0 ? 8 : 0);
  }

  static String typeName(int type) {
    switch (type) {
      case ACCEPT: return "ACCEPT";
      case CLAIM: return "CLAIM";
      case COMMIT: return "COMMIT";
      case RELEASE: return "RELEASE";
      case OFFSETS: return "OFFSETS";
      case ROLL: return "ROLL";
      case SNAPSHOT_END: return "SNAPSHOT_END";
      default: return "type " + type;
    }
  }
}
