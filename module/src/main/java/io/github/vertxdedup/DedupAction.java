package io.github.vertxdedup;

/**
 * The operations of the dedup service. On the wire the operation travels in the {@link #HEADER action} header of a
 * request, by its {@link #wireName()} (the service-proxy convention of Vert.x).
 */
public enum DedupAction {
  /** One step: a first sighting is recorded and accepted. */
  CHECK("check"),
  /** A first sighting is held for a lease and accepted with a claim token. */
  CLAIM("claim"),
  /** With the claim's token: the id becomes remembered until its expiry. */
  COMMIT("commit"),
  /** With the claim's token: the id is forgotten. */
  RELEASE("release"),
  /** Answers what is known of an id; records nothing. */
  LOOKUP("lookup"),
  /** Counters of a partition. */
  STATS("stats"),
  /** Up to {@code maxBatch} checks in order, in one request to one partition. */
  CHECK_BATCH("checkBatch"),
  /** Up to {@code maxBatch} claims in order, in one request to one partition. */
  CLAIM_BATCH("claimBatch"),
  /**
   * Up to {@code maxBatch} commits in order, in one request to one partition, answered per event: COMMITTED or the
   * failure (code and message) a single {@code commit} of it would have answered.
   */
  COMMIT_BATCH("commitBatch");

  /** The name of the request header that carries the action. */
  public static final String HEADER = "action";

  private static final DedupAction[] VALUES = values();

  private final String wireName;

  DedupAction(String wireName) {
    this.wireName = wireName;
  }

  /** @return the name of this action on the wire, e.g. {@code "checkBatch"} */
  public String wireName() {
    return wireName;
  }

  /** @return true for {@link #CHECK_BATCH}, {@link #CLAIM_BATCH} and {@link #COMMIT_BATCH} */
  public boolean isBatch() {
    return this == CHECK_BATCH || this == CLAIM_BATCH || this == COMMIT_BATCH;
  }

  /**
   * Finds an action by its wire name. O(number of actions).
   *
   * @param wireName the header value, case-sensitive
   * @return the action, or null if there is none of that name (or {@code wireName} is null)
   */
  public static DedupAction fromWireName(String wireName) {
    if (wireName != null) {
      for (DedupAction a : VALUES) {
        if (a.wireName.equals(wireName)) {
          return a;
        }
      }
    }
    return null;
  }
}
