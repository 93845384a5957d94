package io.github.vertxdedup.journal;

import io.github.vertxdedup.journal.internal.CommittedOffsets;
import java.util.ArrayList;
import java.util.List;

/** Records every entry a replay delivers, as readable strings, in order. */
final class RecordingVisitor implements JournalVisitor {

  final List<String> entries = new ArrayList<>();
  final CommittedOffsets offsets = new CommittedOffsets();

  static String accept(long fp, long key, long payload, long acceptedAtMs, long expiresAtMs) {
    return "accept " + fp + " key=" + key + " payload=" + payload + " at=" + acceptedAtMs + " until=" + expiresAtMs;
  }

  static String claim(ClaimEntry c) {
    return "claim " + c.fingerprint() + " " + c;
  }

  static String commit(long fp, long token, long expiresAtMs) {
    return "commit " + fp + " token=" + token + " until=" + expiresAtMs;
  }

  static String release(long fp, long token) {
    return "release " + fp + " token=" + token;
  }

  static String offset(String topic, int partition, long offset) {
    return "offset " + topic + "-" + partition + "=" + offset;
  }

  @Override
  public void onAccept(long fp, long key, long payload, long acceptedAtMs, long expiresAtMs) {
    entries.add(accept(fp, key, payload, acceptedAtMs, expiresAtMs));
  }

  @Override
  public void onClaim(ClaimEntry c) {
    entries.add(claim(c));
  }

  @Override
  public void onCommit(long fp, long token, long expiresAtMs) {
    entries.add(commit(fp, token, expiresAtMs));
  }

  @Override
  public void onRelease(long fp, long token) {
    entries.add(release(fp, token));
  }

  @Override
  public void onOffsetCommit(String topic, int partition, long offset) {
    entries.add(offset(topic, partition, offset));
    offsets.record(topic, partition, offset);
  }

  List<String> accepts() {
    return entries.stream().filter(s -> s.startsWith("accept ")).toList();
  }
}
