package io.github.vertxdedup.journal;

import java.nio.file.Files;
import java.nio.file.Path;
import net.openhft.chronicle.queue.impl.TableStore;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.impl.single.TableStoreWriteLock;
import net.openhft.chronicle.queue.impl.table.Metadata;
import net.openhft.chronicle.queue.impl.table.SingleTableBuilder;
import net.openhft.chronicle.threads.BusyTimedPauser;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Chronicle keeps its write lock (and its append lock) as a word holding the writer's pid in the queue's
 * metadata.cq4t. A writer killed while appending leaves it set. Chronicle clears it at open only if it sees that pid
 * dead (/proc/<pid> gone); otherwise the first append spins for 1.5 x timeoutMS (15 s by default) before it checks
 * again. That happens after a kill -9 whenever /proc still shows the pid (a zombie not yet reaped, a reused pid, a
 * pid from another namespace); how often a restart met it is in docs/benchmarks-journal.md (Restart after kill -9).
 *
 * The journal's own directory lock (an OS file lock that dies with its holder) already proves no other writer is
 * alive, so after taking it the journal clears both Chronicle locks unconditionally, the way Chronicle's UnlockMain
 * does, before it builds the queue.
 */
final class ChronicleLocks {

  private static final Logger LOG = LoggerFactory.getLogger("io.github.vertxdedup.journal");

  static {
    // The metadata file names its classes by alias; a fresh JVM knows them only once the queue builder registered
    // them (as Chronicle's UnlockMain does).
    SingleChronicleQueueBuilder.addAliases();
  }

  private ChronicleLocks() {
  }

  /** Clears Chronicle's write and append locks in {@code dir}; the caller holds the directory lock. */
  static void clearLeftovers(Path dir) {
    Path metadata = dir.resolve(SingleChronicleQueue.QUEUE_METADATA_FILE);
    if (!Files.exists(metadata)) {
      return;
    }
    try (TableStore<Metadata.NoMeta> store =
        SingleTableBuilder.binary(metadata, Metadata.NoMeta.INSTANCE).readOnly(false).build()) {
      clear(dir, new TableStoreWriteLock(store, BusyTimedPauser::new, 0L), "write lock");
      clear(dir, new TableStoreWriteLock(store, BusyTimedPauser::new, 0L, TableStoreWriteLock.APPEND_LOCK_KEY),
          "append lock");
    }
  }

  private static void clear(Path dir, TableStoreWriteLock lock, String name) {
    try {
      if (lock.locked()) {
        long holder = lock.lockedBy();
        lock.forceUnlock();
        LOG.info("journal {}: cleared Chronicle's {} left by pid {} (the directory "
            + "lock proves that writer is gone)", dir, name, String.valueOf((int) holder));
      }
    } finally {
      lock.close();
    }
  }
}
