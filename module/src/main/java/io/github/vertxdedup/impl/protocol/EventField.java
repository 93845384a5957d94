package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupEvent;

/**
 * The eight fields of a request event: each one's name on the wire, the actions that take it, and where a
 * {@link DedupEvent} holds it. {@link RequestDecoder} reads a JSON body and a {@link DedupEvent} through these, so both
 * forms are checked by one set of rules. Immutable, so thread-safe.
 */
enum EventField {
  ID("id"), KEY("key"), PAYLOAD_HASH("payloadHash"), EVENT_TIME_MS("eventTimeMs"),
  REMEMBER_UNTIL_MS("rememberUntilMs"), LEASE_MS("leaseMs"), CLAIM_TOKEN("claimToken"), CLAIMER("claimer");

  /** Every field, in the order a {@link DedupEvent} is read: one shared array, not a copy per call of values(). */
  static final EventField[] ALL = values();

  /** The field's name in a JSON body and in error messages. */
  final String wireName;

  EventField(String wireName) {
    this.wireName = wireName;
  }

  /**
   * Finds a field by its wire name. O(1).
   *
   * @param name a JSON body's field name
   * @return the field, or null if no event field has that name
   */
  static EventField named(String name) {
    return switch (name) {
      case "id" -> ID;
      case "key" -> KEY;
      case "payloadHash" -> PAYLOAD_HASH;
      case "eventTimeMs" -> EVENT_TIME_MS;
      case "rememberUntilMs" -> REMEMBER_UNTIL_MS;
      case "leaseMs" -> LEASE_MS;
      case "claimToken" -> CLAIM_TOKEN;
      case "claimer" -> CLAIMER;
      default -> null;
    };
  }

  /**
   * Reads this field of an event, without copying it.
   *
   * @param e the event
   * @return its value (a {@code String}, or a {@code Long} for the instants and the lease), or null if it is not set
   */
  Object of(DedupEvent e) {
    return switch (this) {
      case ID -> e.getId();
      case KEY -> e.getKey();
      case PAYLOAD_HASH -> e.getPayloadHash();
      case EVENT_TIME_MS -> e.getEventTimeMs();
      case REMEMBER_UNTIL_MS -> e.getRememberUntilMs();
      case LEASE_MS -> e.getLeaseMs();
      case CLAIM_TOKEN -> e.getClaimToken();
      case CLAIMER -> e.getClaimer();
    };
  }

  /**
   * Says whether an action takes this field: {@code id} and {@code key} every action; the payload hash and the
   * instants a check or a claim; the lease and the claimer a claim; the claim token a commit or a release.
   *
   * @param action a single action
   * @return whether a request of {@code action} may carry the field
   */
  boolean allowedWith(DedupAction action) {
    return switch (this) {
      case ID, KEY -> true;
      case PAYLOAD_HASH, EVENT_TIME_MS, REMEMBER_UNTIL_MS -> action == DedupAction.CHECK || action == DedupAction.CLAIM;
      case LEASE_MS, CLAIMER -> action == DedupAction.CLAIM;
      case CLAIM_TOKEN -> action == DedupAction.COMMIT || action == DedupAction.RELEASE;
    };
  }

  /**
   * Lists the fields an action takes, for an error message.
   *
   * @param action an action
   * @return the wire names, comma-separated, or a pointer to the documentation for an action without event fields
   */
  static String namesFor(DedupAction action) {
    return switch (action) {
      case CHECK -> "id, key, payloadHash, eventTimeMs, rememberUntilMs";
      case CLAIM -> "id, key, payloadHash, eventTimeMs, rememberUntilMs, leaseMs, claimer";
      case COMMIT, RELEASE -> "id, key, claimToken";
      case LOOKUP -> "id, key";
      default -> "see the action's documentation";
    };
  }
}
