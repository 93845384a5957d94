package io.github.vertxdedup.impl.journal;

import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.journal.SyncPolicy;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.function.Supplier;

/**
 * The group commit of a {@link ChroniclePartitionJournal} under {@link SyncPolicy#SYNC}: a write's future completes
 * once an {@code fsync} covering its record returned. Writes join the open group; at most one {@link Journal#sync()} is
 * in flight, on a worker; when it returns it completes every group whose last record it covered, and the writes that
 * arrived meanwhile go into the next sync. So the event loop never waits for the disk, and one {@code fsync}
 * answers as many requests as arrived during the previous one. A failed sync fails its group and the open one: the
 * journal has failed for good (see {@link Journal#sync}), so every later write fails too.
 *
 * <p>Not thread-safe: confined to the partition's event loop; the syncs complete on the partition's context.
 */
final class GroupCommit {

  private static final Future<Void> DONE = Future.succeededFuture();

  private final Supplier<Journal> target;
  /** The writes appended since the sync in flight started. */
  private Group openGroup;
  private Future<?> syncing;

  /** @param target the journal to sync, or null while it is not open or is closing (no new sync starts then) */
  GroupCommit(Supplier<Journal> target) {
    this.target = target;
  }

  /**
   * A record was appended at {@code index}.
   *
   * @return completes once a sync covering it returned; fails if that sync failed
   */
  Future<Void> written(Context context, long index) {
    Group g = openGroup;
    if (g == null) {
      g = new Group();
      openGroup = g;
    }
    g.lastIndex = index;
    if (syncing == null) {
      startSync(context);
    }
    return g.promise.future();
  }

  /** @return the sync in flight, or null */
  Future<?> inFlight() {
    return syncing;
  }

  /**
   * Closing: syncs the writes of the open group (the sync in flight has completed) and settles their futures.
   *
   * @return completes when they are settled
   */
  Future<Void> flush(Context context, Journal j) {
    if (j == null || openGroup == null) {
      return DONE;
    }
    Group g = openGroup;
    openGroup = null;
    return context.executeBlocking(j::sync, false).andThen(ar -> settle(g, ar.succeeded() ? null : ar.cause()))
        .mapEmpty();
  }

  private void startSync(Context context) {
    Group g = openGroup;
    Journal j = target.get();
    if (g == null || j == null) {
      return;
    }
    openGroup = null;
    Future<Long> f = context.executeBlocking(j::sync, false);
    syncing = f;
    f.onComplete(ar -> {
      syncing = null;
      if (ar.failed()) {
        settle(g, ar.cause());
        // The journal failed for good (see Journal.sync): every later write fails too.
        Group next = openGroup;
        openGroup = null;
        if (next != null) {
          settle(next, ar.cause());
        }
        return;
      }
      settle(g, null);
      Group next = openGroup;
      if (next != null && next.lastIndex <= ar.result()) {
        openGroup = null;
        settle(next, null);
      } else if (next != null) {
        startSync(context);
      }
    });
  }

  private static void settle(Group g, Throwable failure) {
    if (failure == null) {
      g.promise.tryComplete();
    } else {
      g.promise.tryFail(failure);
    }
  }

  /** Writes waiting for the same sync. */
  private static final class Group {
    final Promise<Void> promise = Promise.promise();
    long lastIndex;
  }
}
