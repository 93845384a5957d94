package io.github.vertxdedup.impl.protocol;

import io.github.vertxdedup.DedupAction;
import io.github.vertxdedup.DedupBatchResult;
import io.github.vertxdedup.DedupClient;
import io.github.vertxdedup.DedupEvent;
import io.github.vertxdedup.DedupResult;
import io.vertx.core.Future;
import java.util.List;

/**
 * The part of a {@link DedupClient} that only names the action: each single action and each decision batch goes to
 * one of two methods of the transport ({@code DedupClientImpl}, the event bus; {@code InProcessClient}, a partition
 * verticle called in-process). Thread-safe if the subclass is.
 */
public abstract class ActionClient implements DedupClient {

  /**
   * Sends one event.
   *
   * @param action {@link DedupAction#CHECK}, {@link DedupAction#CLAIM}, {@link DedupAction#COMMIT} or
   *     {@link DedupAction#RELEASE}
   * @param event the event
   * @return its result, or the service's failure
   */
  protected abstract Future<DedupResult> single(DedupAction action, DedupEvent event);

  /**
   * Sends a decision batch.
   *
   * @param action {@link DedupAction#CHECK_BATCH} or {@link DedupAction#CLAIM_BATCH}
   * @param events the events, all of one partition
   * @return one element per event, in order (its result or its own failure), or the service's failure
   */
  protected abstract Future<List<DedupBatchResult>> batch(DedupAction action, List<DedupEvent> events);

  @Override
  public final Future<DedupResult> check(DedupEvent event) {
    return single(DedupAction.CHECK, event);
  }

  @Override
  public final Future<DedupResult> claim(DedupEvent event) {
    return single(DedupAction.CLAIM, event);
  }

  @Override
  public final Future<DedupResult> commit(DedupEvent event) {
    return single(DedupAction.COMMIT, event);
  }

  @Override
  public final Future<DedupResult> release(DedupEvent event) {
    return single(DedupAction.RELEASE, event);
  }

  @Override
  public final Future<List<DedupBatchResult>> checkBatch(List<DedupEvent> events) {
    return batch(DedupAction.CHECK_BATCH, events);
  }

  @Override
  public final Future<List<DedupBatchResult>> claimBatch(List<DedupEvent> events) {
    return batch(DedupAction.CLAIM_BATCH, events);
  }
}
