package io.github.vertxdedup.journal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RecordDecoderTest {

  private final RecordEncoder encoder = new RecordEncoder();
  private final RecordDecoder decoder = new RecordDecoder();

  private byte[] acceptRecord() {
    AcceptBatch b = new AcceptBatch(4).add(1, 2, 3, 10, 20).add(4, 0, 6, 11, 25).add(7, 0, 0, 12, 22);
    int flags = RecordFormat.FLAG_KEYS | RecordFormat.FLAG_PAYLOADS;
    encoder.begin(RecordFormat.ACCEPT, flags, b.size());
    encoder.putAccepts(b, flags);
    return Arrays.copyOf(encoder.buffer(), encoder.finish());
  }

  private byte[] claimRecord() {
    encoder.begin(RecordFormat.CLAIM, 0, 2);
    for (int i = 1; i <= 2; i++) {
      encoder.putLong(i);
      encoder.putLong(i * 10);
      encoder.putLong(i * 11);
      encoder.putLong(i * 100);
      encoder.putLong(i * 500);
      encoder.putLong(i * 1000);
      encoder.putLong(i == 1 ? ClaimEntry.NOT_RECORDED : 3000);
      encoder.putShortString(("c" + i).getBytes(StandardCharsets.UTF_8));
    }
    return Arrays.copyOf(encoder.buffer(), encoder.finish());
  }

  /** A CLAIM record as format version 1 wrote it: no payload hash, claim time or remember-until column. */
  static byte[] claimRecordV1(RecordEncoder encoder, long fp, long key, long token, long leaseEndMs, String text) {
    encoder.begin(RecordFormat.CLAIM, 0, 1);
    encoder.putLong(fp);
    encoder.putLong(key);
    encoder.putLong(token);
    encoder.putLong(leaseEndMs);
    encoder.putShortString(text.getBytes(StandardCharsets.UTF_8));
    encoder.buffer()[0] = 1;
    return Arrays.copyOf(encoder.buffer(), encoder.finish());
  }

  private int decode(byte[] record, int length, RecordingVisitor v) {
    decoder.load(record, length);
    return decoder.decode(v);
  }

  @Test
  void shouldDecodeWhatTheEncoderWroteAndReportTheLatestExpiry() {
    RecordingVisitor v = new RecordingVisitor();
    byte[] record = acceptRecord();
    assertThat(decode(record, record.length, v)).isEqualTo(RecordDecoder.OK);
    assertThat(v.entries).containsExactly(RecordingVisitor.accept(1, 2, 3, 10, 20),
        RecordingVisitor.accept(4, 0, 6, 11, 25), RecordingVisitor.accept(7, 0, 0, 12, 22));
    assertThat(decoder.maxExpiry).isEqualTo(25);

    byte[] claims = claimRecord();
    assertThat(decode(claims, claims.length, v)).isEqualTo(RecordDecoder.OK);
    assertThat(v.entries).endsWith(
        RecordingVisitor.claim(ClaimEntry.of(1, 10, 11, 100, 500, 1000, ClaimEntry.NOT_RECORDED, "c1")),
        RecordingVisitor.claim(ClaimEntry.of(2, 20, 22, 200, 1000, 2000, 3000, "c2")));
    assertThat(decoder.maxExpiry).as("claims do not keep their cycle").isEqualTo(RecordFormat.NO_EXPIRY);
  }

  @Test
  void shouldStillDecodeAClaimOfFormatVersion1WithTheColumnsItHad() {
    byte[] record = claimRecordV1(encoder, 5, 50, 500, 5000, "c1;4000;cafe;-");
    RecordingVisitor v = new RecordingVisitor();
    assertThat(decode(record, record.length, v)).isEqualTo(RecordDecoder.OK);
    assertThat(decoder.version).isEqualTo(1);
    assertThat(v.entries).containsExactly(RecordingVisitor.claim(new ClaimEntry(5, 50, 0, 500,
        ClaimEntry.NOT_RECORDED, 5000, ClaimEntry.NOT_RECORDED, "c1;4000;cafe;-", 1)));
    // The same bytes as a version-2 record do not fit the version-2 layout: torn, not misread.
    record[0] = 2;
    byte[] v2 = reChecksummed(record);
    assertThat(decode(v2, v2.length, new RecordingVisitor())).isEqualTo(RecordDecoder.TORN);
  }

  @Test
  void shouldCallAClaimWithFingerprintZeroTornInBothVersions() {
    byte[] v1 = claimRecordV1(encoder, 0, 50, 500, 5000, "x");
    assertThat(decode(v1, v1.length, new RecordingVisitor())).isEqualTo(RecordDecoder.TORN);
    encoder.begin(RecordFormat.CLAIM, 0, 1);
    for (int i = 0; i < 7; i++) {
      encoder.putLong(0);
    }
    encoder.putShortString(new byte[0]);
    byte[] v2 = Arrays.copyOf(encoder.buffer(), encoder.finish());
    RecordingVisitor v = new RecordingVisitor();
    assertThat(decode(v2, v2.length, v)).isEqualTo(RecordDecoder.TORN);
    assertThat(decoder.tornReason).contains("fingerprint of 0");
    assertThat(v.entries).isEmpty();
  }

  private static byte[] reChecksummed(byte[] record) {
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(record, 0, record.length - RecordFormat.CRC_BYTES);
    byte[] out = record.clone();
    RecordFormat.INT.set(out, out.length - RecordFormat.CRC_BYTES, (int) crc.getValue());
    return out;
  }

  @Test
  void shouldCallEveryPrefixOfARecordTornAndDeliverNothingFromIt() {
    for (byte[] record : new byte[][] {acceptRecord(), claimRecord(), claimRecordV1(encoder, 5, 0, 1, 2, "c")}) {
      for (int length = 0; length < record.length; length++) {
        RecordingVisitor v = new RecordingVisitor();
        // The bytes past the cut are whatever was there before: zeroes in pre-allocated space.
        byte[] cut = Arrays.copyOf(Arrays.copyOf(record, length), record.length);
        assertThat(decode(cut, length, v)).as("prefix of %d bytes", length).isEqualTo(RecordDecoder.TORN);
        assertThat(decode(cut, record.length, v)).as("zeroes after %d bytes", length).isEqualTo(RecordDecoder.TORN);
        assertThat(v.entries).isEmpty();
      }
    }
  }

  @Test
  void shouldCallEverySingleBitFlipTorn() {
    byte[] record = acceptRecord();
    for (int bit = 0; bit < record.length * 8; bit++) {
      byte[] flipped = record.clone();
      flipped[bit / 8] ^= (byte) (1 << (bit % 8));
      RecordingVisitor v = new RecordingVisitor();
      assertThat(decode(flipped, flipped.length, v)).as("bit %d", bit).isEqualTo(RecordDecoder.TORN);
      assertThat(v.entries).isEmpty();
      assertThat(decoder.tornReason).isNotBlank();
    }
  }

  @Test
  void shouldTellAnUnknownVersionWithAValidChecksumFromDamage() {
    encoder.begin(RecordFormat.ACCEPT, 0, 1);
    encoder.putLong(1);
    encoder.putLong(2);
    encoder.putLong(3);
    encoder.buffer()[0] = 7;
    byte[] record = Arrays.copyOf(encoder.buffer(), encoder.finish());
    RecordingVisitor v = new RecordingVisitor();
    assertThat(decode(record, record.length, v)).isEqualTo(RecordDecoder.UNKNOWN_VERSION);
    assertThat(decoder.version).isEqualTo(7);
    assertThat(v.entries).isEmpty();
  }

  @Test
  void shouldReportAnUnknownTypeOfAKnownVersion() {
    encoder.begin(99, 0, 1);
    encoder.putLong(1);
    byte[] record = Arrays.copyOf(encoder.buffer(), encoder.finish());
    assertThat(decode(record, record.length, new RecordingVisitor())).isEqualTo(RecordDecoder.UNKNOWN_TYPE);
  }

  @Test
  void shouldCallAnEntryCountThatDoesNotFitTheRecordTorn() {
    encoder.begin(RecordFormat.COMMIT, 0, 2);
    encoder.putLong(1);
    encoder.putLong(2);
    encoder.putLong(3);
    byte[] record = Arrays.copyOf(encoder.buffer(), encoder.finish());
    assertThat(decode(record, record.length, new RecordingVisitor())).isEqualTo(RecordDecoder.TORN);
    assertThat(decoder.tornReason).isEqualTo("COMMIT record of 2 entries does not fit its 24 bytes");
  }
}
