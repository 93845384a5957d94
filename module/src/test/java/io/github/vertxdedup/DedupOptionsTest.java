package io.github.vertxdedup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.vertxdedup.journal.SyncPolicy;
import io.github.vertxdedup.window.CapacityPolicy;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DedupOptionsTest {

  @Test
  void shouldHaveTheDocumentedDefaults() {
    DedupOptions o = new DedupOptions();
    assertThat(o.getAddress()).isEqualTo("dedup");
    assertThat(o.getPartitions()).isEqualTo(1);
    assertThat(o.isRouteByKey()).isFalse();
    assertThat(o.getWindowMs()).isZero();
    assertThat(o.getBucketMs()).isZero();
    assertThat(o.getMaxIdBytes()).isEqualTo(1024);
    assertThat(o.getMaxBatch()).isEqualTo(1000);
    assertThat(o.getLeaseMs()).isEqualTo(30_000);
    assertThat(o.getCapacityPolicy()).isEqualTo(CapacityPolicy.REJECT);
    assertThat(o.getUncoveredPolicy()).isEqualTo(UncoveredPolicy.UNKNOWN);
    assertThat(o.isPayloadHashes()).isTrue();
    assertThat(o.getJournalDir()).isNull();
    assertThat(o.getJournalSync()).isEqualTo(SyncPolicy.ASYNC);
    assertThat(o.getJournalSnapshotEntries()).isEqualTo(65_536);
  }

  @Test
  void shouldRoundTripThroughJson() {
    DedupOptions o = new DedupOptions()
        .setAddress("payments")
        .setPartitions(8)
        .setRouteByKey(true)
        .setWindow(Duration.ofMinutes(10))
        .setBucket(Duration.ofSeconds(5))
        .setMaxIdsPerPartition(123_456)
        .setExpectedIdsPerPartition(1_000)
        .setCapacityPolicy(CapacityPolicy.EVICT_OLDEST)
        .setPayloadHashes(false)
        .setUncoveredPolicy(UncoveredPolicy.ACCEPT)
        .setMaxIdBytes(256)
        .setMaxBatch(500)
        .setLease(Duration.ofSeconds(7))
        .setMaxPending(42)
        .setJournalDir("/var/lib/dedup")
        .setJournalSync(SyncPolicy.SYNC)
        .setJournalSnapshotEntries(1_000)
        .setUnvouchedPolicy(UnvouchedPolicy.REFUSE)
        .setOwnerLeaseMs(20_000)
        .setOwnerCheckMs(3_000)
        .setOwnerLockPollMs(500);
    JsonObject json = o.toJson();
    DedupOptions back = new DedupOptions(json);
    assertThat(back).isEqualTo(o);
    assertThat(back.toJson()).isEqualTo(json);
    assertThat(json.getLong("windowMs")).isEqualTo(600_000);
    assertThat(json.getString("capacityPolicy")).isEqualTo("EVICT_OLDEST");
    assertThat(json.getString("journalSync")).isEqualTo("SYNC");
    assertThat(json.getLong("journalSnapshotEntries")).isEqualTo(1_000);
    assertThat(json.getBoolean("routeByKey")).isTrue();
    assertThat(json.getString("unvouchedPolicy")).isEqualTo("REFUSE");
    assertThat(json.getLong("ownerLeaseMs")).isEqualTo(20_000);
    assertThat(new DedupOptions(o)).isEqualTo(o);
    assertThat(new DedupOptions(o).isRouteByKey()).isTrue();
    assertThat(new DedupOptions(o).setRouteByKey(false)).isNotEqualTo(o);
  }

  @Test
  void shouldRoundTripDefaultsWithoutWritingUnsetValues() {
    DedupOptions o = new DedupOptions();
    JsonObject json = o.toJson();
    assertThat(json.containsKey("windowMs")).isFalse();
    assertThat(json.containsKey("bucketMs")).isFalse();
    assertThat(json.containsKey("journalDir")).isFalse();
    assertThat(json.getBoolean("routeByKey")).isFalse();
    assertThat(new DedupOptions(json)).isEqualTo(o);
  }

  @Test
  void shouldDeriveTheBucketFromTheWindow() {
    DedupOptions o = new DedupOptions().setWindowMs(60_000).validate();
    assertThat(o.getEffectiveBucketMs()).isEqualTo(1_000);
  }

  @Test
  void shouldRejectAnUnknownKeyNamingItAndTheKnownOnes() {
    assertThatThrownBy(() -> new DedupOptions(new JsonObject().put("windowMs", 60_000).put("window", 5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("unknown dedup option 'window' (known: address, partitions, routeByKey, windowMs,")
        .hasMessageEndingWith("journalDir, journalSync, journalSnapshotEntries, unvouchedPolicy, ownerLeaseMs,"
            + " ownerCheckMs, ownerLockPollMs)");
  }

  @Test
  void shouldRejectWrongJsonTypesNamingTheKeyAndTheExpectedType() {
    assertWrongType("windowMs", "60s", "dedup option 'windowMs' must be a JSON integer but was the string \"60s\"");
    assertWrongType("partitions", 1.5, "dedup option 'partitions' must be a JSON integer but was the number 1.5");
    assertWrongType("partitions", 4_294_967_297L, "dedup option 'partitions' must be a JSON integer in "
        + "-2147483648..2147483647 but was the number 4294967297");
    assertWrongType("leaseMs", new JsonObject().put("ms", 5),
        "dedup option 'leaseMs' must be a JSON integer but was a JSON object");
    assertWrongType("maxBatch", new JsonArray().add(5),
        "dedup option 'maxBatch' must be a JSON integer but was a JSON array");
    assertWrongType("capacityPolicy", "DROP",
        "dedup option 'capacityPolicy' must be one of the JSON strings REJECT | EVICT_OLDEST but was the string"
            + " \"DROP\"");
    assertWrongType("capacityPolicy", 1,
        "dedup option 'capacityPolicy' must be one of the JSON strings REJECT | EVICT_OLDEST but was the number 1");
    assertWrongType("payloadHashes", "yes",
        "dedup option 'payloadHashes' must be a JSON boolean but was the string \"yes\"");
    assertWrongType("routeByKey", "true",
        "dedup option 'routeByKey' must be a JSON boolean but was the string \"true\"");
    assertWrongType("address", 7, "dedup option 'address' must be a JSON string but was the number 7");
    assertWrongType("journalDir", false, "dedup option 'journalDir' must be a JSON string but was the boolean false");
    assertWrongType("journalSync", "ALWAYS",
        "dedup option 'journalSync' must be one of the JSON strings NONE | ASYNC | SYNC but was the string \"ALWAYS\"");
    assertThatThrownBy(() -> new DedupOptions().setJournalSync(null))
        .hasMessageContaining("journalSync must be NONE, ASYNC or SYNC but was null");
    assertThatThrownBy(() -> new DedupOptions().setJournalSnapshotEntries(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("journalSnapshotEntries must be in 0..9223372036854775807 but was -1");
  }

  private static void assertWrongType(String key, Object value, String message) {
    assertThatThrownBy(() -> new DedupOptions(new JsonObject().put(key, value)))
        .as("%s = %s", key, value)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @Test
  void shouldReadAJsonNullAsTheDefault() {
    DedupOptions o = new DedupOptions(new JsonObject().put("windowMs", 60_000).put("leaseMs", null)
        .put("journalDir", null).put("capacityPolicy", null).put("routeByKey", null));
    assertThat(o).isEqualTo(new DedupOptions().setWindowMs(60_000));
    assertThatThrownBy(() -> new DedupOptions(new JsonObject().put("windowMs", null)).validate())
        .hasMessageContaining("windowMs is required");
  }

  @Test
  void shouldCopyEveryValueIntoAnIndependentObject() {
    DedupOptions o = new DedupOptions(fullJson());
    DedupOptions copy = new DedupOptions(o);
    assertThat(copy).isEqualTo(o).isNotSameAs(o);
    assertThat(copy.toJson()).isEqualTo(fullJson());
    copy.setLeaseMs(1).setJournalDir(null).setAddress("other");
    assertThat(o.toJson()).isEqualTo(fullJson());
  }

  @Test
  void shouldWriteEveryKeyItReads() {
    // Every key of the JSON form, each with a value other than its default: toJson writes them all back.
    JsonObject full = fullJson();
    assertThat(new DedupOptions(full).toJson()).isEqualTo(full);
    assertThat(full.fieldNames()).hasSize(22);
    for (String key : full.fieldNames()) {
      assertThat(new DedupOptions().toJson().getValue(key)).as(key).isNotEqualTo(full.getValue(key));
    }
  }

  private static JsonObject fullJson() {
    return new JsonObject().put("address", "payments").put("partitions", 8).put("routeByKey", true)
        .put("windowMs", 600_000L).put("bucketMs", 5_000L).put("maxIdsPerPartition", 123_456L)
        .put("expectedIdsPerPartition", 1_000).put("capacityPolicy", "EVICT_OLDEST").put("payloadHashes", false)
        .put("uncoveredPolicy", "ACCEPT").put("maxIdBytes", 256).put("maxBatch", 500).put("leaseMs", 7_000L)
        .put("maxPending", 42).put("requestTimeoutMs", 2_500L).put("journalSync", "SYNC")
        .put("journalSnapshotEntries", 0L)
        .put("unvouchedPolicy", "REFUSE").put("ownerLeaseMs", 20_000L).put("ownerCheckMs", 3_000L)
        .put("ownerLockPollMs", 500L).put("journalDir", "/var/lib/dedup");
  }

  @Test
  void shouldRejectOutOfRangeValuesNamingTheFieldAndLimit() {
    assertThatThrownBy(() -> new DedupOptions().setPartitions(0)).hasMessage("partitions must be in 1..1024 but was 0");
    assertThatThrownBy(() -> new DedupOptions().setMaxBatch(100_001))
        .hasMessage("maxBatch must be in 1..100000 but was 100001");
    assertThatThrownBy(() -> new DedupOptions().setLeaseMs(0)).hasMessageContaining("leaseMs must be in 1..");
    assertThatThrownBy(() -> new DedupOptions().setOwnerLeaseMs(0))
        .hasMessage("ownerLeaseMs must be in 1..3600000 but was 0");
    assertThatThrownBy(() -> new DedupOptions().setOwnerCheckMs(3_600_001))
        .hasMessage("ownerCheckMs must be in 1..3600000 but was 3600001");
    assertThatThrownBy(() -> new DedupOptions().setOwnerLockPollMs(-1))
        .hasMessage("ownerLockPollMs must be in 1..3600000 but was -1");
    assertThatThrownBy(() -> new DedupOptions().setUnvouchedPolicy(null)).hasMessageContaining("unvouchedPolicy");
    assertThatThrownBy(() -> new DedupOptions().setWindowMs(60_000).setOwnerLeaseMs(1_000).setOwnerCheckMs(501)
        .validate()).hasMessageStartingWith("ownerCheckMs must be <= ownerLeaseMs / 2 (500 with ownerLeaseMs 1000)")
        .hasMessageEndingWith("but was 501");
    assertThat(new DedupOptions().setWindowMs(60_000).setOwnerLeaseMs(1_000).setOwnerCheckMs(500).validate()
        .getOwnerCheckMs()).isEqualTo(500);
    assertThatThrownBy(() -> new DedupOptions().setWindowMs(-1)).hasMessageContaining("windowMs must be in 1..");
    assertThatThrownBy(() -> new DedupOptions().setMaxIdBytes(0)).hasMessageContaining("maxIdBytes");
    assertThatThrownBy(() -> new DedupOptions().setMaxPending(0)).hasMessageContaining("maxPending");
    assertThatThrownBy(() -> new DedupOptions().setRequestTimeoutMs(0))
        .hasMessage("requestTimeoutMs must be in 1..3600000 but was 0");
    assertThat(new DedupOptions().setRequestTimeout(Duration.ofSeconds(2)).getRequestTimeoutMs()).isEqualTo(2_000);
    assertThatThrownBy(() -> new DedupOptions().setAddress(" ")).hasMessageContaining("address");
    assertThatThrownBy(() -> new DedupOptions().setJournalDir("")).hasMessageContaining("journalDir");
    assertThatThrownBy(() -> new DedupOptions().setWindow(Duration.ofNanos(1_500_000)))
        .hasMessageContaining("window must be a whole number of milliseconds");
    assertThatThrownBy(() -> new DedupOptions().setLease(Duration.ZERO)).hasMessageContaining("lease must be > 0");
  }

  @Test
  void shouldValidateRulesAcrossValues() {
    assertThatThrownBy(() -> new DedupOptions().validate()).hasMessageContaining("windowMs is required");
    assertThatThrownBy(() -> new DedupOptions().setWindowMs(1_000).validate())
        .hasMessageContaining("windowMs must be a multiple of 60");
    assertThatThrownBy(() -> new DedupOptions().setWindowMs(60_000).setBucketMs(7_000).validate())
        .hasMessageContaining("bucketMs must divide windowMs (60000) but was 7000");
    assertThatThrownBy(() -> new DedupOptions().setWindowMs(60_000_000).setBucketMs(1).validate())
        .hasMessageContaining("windowMs / bucketMs must be <=");
    assertThatThrownBy(() -> new DedupOptions().setWindowMs(60_000).setMaxIdsPerPartition(10)
        .setExpectedIdsPerPartition(11).validate()).hasMessageContaining("expectedIdsPerPartition must be <=");
    assertThatThrownBy(() -> new DedupOptions().setWindowMs(60_000).setMaxIdsPerPartition(Long.MAX_VALUE).validate())
        .hasMessageContaining("maxIdsPerPartition must be <=");
  }

  @Test
  void shouldRefuseAnAddressThatIsNotOneDirectoryNameWhenJournalDirIsSet() {
    for (String bad : new String[] {"../../escaped", "a/b", "..", ".hidden", "a\\b", ""}) {
      DedupOptions o = new DedupOptions().setWindowMs(60_000).setJournalDir("/tmp/j");
      assertThatThrownBy(() -> o.setAddress(bad).validate())
          .as("address %s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("address");
    }
    assertThat(new DedupOptions().setWindowMs(60_000).setJournalDir("/tmp/j").setAddress("payments.v2").validate())
        .isNotNull();
    assertThat(new DedupOptions().setWindowMs(60_000).setAddress("a/b").validate()).isNotNull();
  }
}
