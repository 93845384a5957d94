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
      encoder.putLong(i * 100);
      encoder.putLong(i * 1000);
      encoder.putShortString(("c" + i).getBytes(StandardCharsets.UTF_8));
    }
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
    assertThat(v.entries).endsWith(RecordingVisitor.claim(1, 10, 100, "c1", 1000),
        RecordingVisitor.claim(2, 20, 200, "c2", 2000));
    assertThat(decoder.maxExpiry).as("claims do not keep their cycle").isEqualTo(RecordFormat.NO_EXPIRY);
  }

  @Test
  void shouldCallEveryPrefixOfARecordTornAndDeliverNothingFromIt() {
    for (byte[] record : new byte[][] {acceptRecord(), claimRecord()}) {
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
