package io.github.vertxdedup.kafka.impl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * One record of a changelog topic ({@link ChangelogTopics}): an id accepted in a source partition, or the mark of an
 * offset commit that says which source offsets the entries before it cover. Immutable and thread-safe.
 *
 * <h2>Layout</h2>
 * The record's value is a plain big-endian binary layout that starts with a format byte ({@link #FORMAT}, 1) and a
 * kind byte; a reader refuses a format it does not know rather than guess.
 * <ul>
 *   <li>{@link Kind#ACCEPTED} (kind 1), keyed by the id in UTF-8, so all entries of one source partition are in one
 *   changelog partition, in the order they were written: {@code format:u8 kind:u8 sourceOffset:i64
 *   acceptedAtMs:i64 rememberUntilMs:i64 keyLength:i16 key:utf8 hashLength:i16 hash:utf8}, where a length of -1
 *   stands for no key or no payload hash. {@code acceptedAtMs} is when the owner's window accepted the id (its
 *   check, or its claim's commit, answered), {@code rememberUntilMs} until when that window remembers it, both
 *   epoch milliseconds on the windows' clock.</li>
 *   <li>{@link Kind#COMMIT} (kind 2), with no record key: {@code format:u8 kind:u8 fromOffset:i64 toOffset:i64}:
 *   the transaction that holds it committed the group's offset {@code toOffset} for the source partition and holds
 *   (with the transactions before it back to the one that committed {@code fromOffset}) the entry of every id
 *   accepted in the source offsets {@code [fromOffset, toOffset)}.</li>
 * </ul>
 * An accepted entry takes {@code 30 + |key| + |hash|} bytes of value plus its id as the record key; a commit mark 18
 * bytes. The key and the hash are at most {@value Short#MAX_VALUE} bytes in UTF-8 (the window's {@code maxIdBytes}
 * bounds them far below that).
 *
 * @param kind what the entry says
 * @param id the accepted id, or null for a commit mark
 * @param key the id's business key, or null
 * @param payloadHash the id's payload hash, or null
 * @param sourceOffset the source record's offset (accepted), or the commit's {@code fromOffset}
 * @param acceptedAtMs when the id was accepted, epoch milliseconds (accepted), or the commit's {@code toOffset}
 * @param rememberUntilMs until when the id is remembered, epoch milliseconds (accepted), or 0 for a commit mark
 */
record ChangelogEntry(Kind kind, String id, String key, String payloadHash, long sourceOffset, long acceptedAtMs,
    long rememberUntilMs) {

  /** The format byte every entry starts with. */
  static final byte FORMAT = 1;

  /** What an entry says. */
  enum Kind {
    /** An id accepted in the source partition. */
    ACCEPTED((byte) 1),
    /** An offset commit, and the source offsets whose accepted ids the changelog holds up to it. */
    COMMIT((byte) 2);

    final byte code;

    Kind(byte code) {
      this.code = code;
    }
  }

  /**
   * @param id the accepted id
   * @param key its business key, or null
   * @param payloadHash its payload hash, or null
   * @param sourceOffset the offset of the source record that carried it
   * @param acceptedAtMs when the window accepted it, epoch milliseconds
   * @param rememberUntilMs until when the window remembers it, epoch milliseconds
   * @return an accepted entry
   */
  static ChangelogEntry accepted(String id, String key, String payloadHash, long sourceOffset, long acceptedAtMs,
      long rememberUntilMs) {
    return new ChangelogEntry(Kind.ACCEPTED, id, key, payloadHash, sourceOffset, acceptedAtMs, rememberUntilMs);
  }

  /**
   * @param fromOffset the source offset the previous commit mark of this owner ended at
   * @param toOffset the source offset committed
   * @return a commit mark
   */
  static ChangelogEntry commit(long fromOffset, long toOffset) {
    return new ChangelogEntry(Kind.COMMIT, null, null, null, fromOffset, toOffset, 0);
  }

  /** @return the first source offset a commit mark covers */
  long fromOffset() {
    return sourceOffset;
  }

  /** @return the source offset a commit mark committed */
  long toOffset() {
    return acceptedAtMs;
  }

  /** @return the record key: the id in UTF-8, or null for a commit mark */
  byte[] recordKey() {
    return id == null ? null : id.getBytes(StandardCharsets.UTF_8);
  }

  /** @return the record value in the layout above */
  byte[] value() {
    if (kind == Kind.COMMIT) {
      return ByteBuffer.allocate(18).put(FORMAT).put(kind.code).putLong(sourceOffset).putLong(acceptedAtMs).array();
    }
    byte[] k = utf8(key, "key");
    byte[] h = utf8(payloadHash, "payloadHash");
    ByteBuffer b = ByteBuffer.allocate(30 + (k == null ? 0 : k.length) + (h == null ? 0 : h.length))
        .put(FORMAT).put(kind.code).putLong(sourceOffset).putLong(acceptedAtMs).putLong(rememberUntilMs);
    putString(b, k);
    putString(b, h);
    return b.array();
  }

  /**
   * Reads an entry.
   *
   * @param recordKey the record's key (the id of an accepted entry), or null
   * @param value the record's value
   * @return the entry
   * @throws IllegalArgumentException if the value is not in a format and kind this build knows, is cut short, or an
   *     accepted entry has no key; the message names the byte or field
   */
  static ChangelogEntry read(byte[] recordKey, byte[] value) {
    if (value == null || value.length < 2) {
      throw new IllegalArgumentException("changelog entry too short: " + (value == null ? "no value" : value.length
          + " bytes"));
    }
    if (value[0] != FORMAT) {
      throw new IllegalArgumentException("changelog entry format " + value[0] + " is not known (this build reads "
          + FORMAT + ")");
    }
    ByteBuffer b = ByteBuffer.wrap(value, 2, value.length - 2);
    try {
      if (value[1] == Kind.COMMIT.code) {
        return commit(b.getLong(), b.getLong());
      }
      if (value[1] != Kind.ACCEPTED.code) {
        throw new IllegalArgumentException("changelog entry kind " + value[1] + " is not known");
      }
      if (recordKey == null) {
        throw new IllegalArgumentException("changelog entry of an accepted id has no record key (the id)");
      }
      long offset = b.getLong();
      long acceptedAt = b.getLong();
      long until = b.getLong();
      String key = getString(b);
      String hash = getString(b);
      return accepted(new String(recordKey, StandardCharsets.UTF_8), key, hash, offset, acceptedAt, until);
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalArgumentException("changelog entry cut short: " + value.length + " bytes", e);
    }
  }

  private static byte[] utf8(String s, String field) {
    if (s == null) {
      return null;
    }
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > Short.MAX_VALUE) {
      throw new IllegalArgumentException("changelog entry " + field + " must be at most " + Short.MAX_VALUE
          + " bytes in UTF-8 but was " + bytes.length);
    }
    return bytes;
  }

  private static void putString(ByteBuffer b, byte[] s) {
    if (s == null) {
      b.putShort((short) -1);
    } else {
      b.putShort((short) s.length).put(s);
    }
  }

  private static String getString(ByteBuffer b) {
    short n = b.getShort();
    if (n < 0) {
      return null;
    }
    byte[] s = new byte[n];
    b.get(s);
    return new String(s, StandardCharsets.UTF_8);
  }
}
