package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupEvent;
import java.util.List;

/**
 * A request sent through the local codec by a {@link io.github.vertxdedup.DedupClient} in the same JVM as the
 * service: the action travels in the object instead of a header, the event as a {@link DedupEvent} instead of JSON.
 * Immutable (the events it refers to must not be changed while the request is in flight).
 */
public final class LocalRequest {

  public final DedupAction action;
  public final DedupEvent event;
  public final List<DedupEvent> events;

  private LocalRequest(DedupAction action, DedupEvent event, List<DedupEvent> events) {
    this.action = action;
    this.event = event;
    this.events = events;
  }

  /**
   * @param action a single action
   * @param event its event
   * @return a request
   */
  public static LocalRequest single(DedupAction action, DedupEvent event) {
    return new LocalRequest(action, event, null);
  }

  /**
   * @param action {@link DedupAction#CHECK_BATCH}, {@link DedupAction#CLAIM_BATCH} or
   *     {@link DedupAction#COMMIT_BATCH}
   * @param events the events
   * @return a request
   */
  public static LocalRequest batch(DedupAction action, List<DedupEvent> events) {
    return new LocalRequest(action, null, events);
  }

  /** @return a {@code stats} request */
  public static LocalRequest stats() {
    return new LocalRequest(DedupAction.STATS, null, null);
  }

  /** @return the action */
  public DedupAction action() {
    return action;
  }

  /** @return the event of a single request, else null */
  public DedupEvent event() {
    return event;
  }

  /** @return the events of a batch request, else null */
  public List<DedupEvent> events() {
    return events;
  }
}
