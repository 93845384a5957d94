package io.github.vertxdedup.journal;

/**
 * When appended records are forced to disk. Named after Chronicle's {@code SyncMode} ({@code NONE}, {@code ASYNC},
 * {@code SYNC}), whose levels of protection it keeps.
 *
 * <p>Every append writes into a memory-mapped file before it returns, so a process crash ({@code kill -9}) loses
 * nothing that an append returned for, with any policy: the data is in the operating system's page cache. The
 * policies differ only on a power loss or kernel crash:
 * <ul>
 *   <li>{@link #NONE}: the kernel writes pages back when it chooses (on Linux about 30 s after they were dirtied,
 *       {@code vm.dirty_expire_centisecs}); a power loss can lose that much.</li>
 *   <li>{@link #ASYNC}: the journal forces its files to disk every {@link JournalOptions#getSyncInterval()} from a
 *       background thread; a power loss loses at most about that interval. Appends do not wait.</li>
 *   <li>{@link #SYNC}: the owner calls {@link Journal#sync()} (off its event loop) and answers only after it
 *       returned; a power loss loses nothing that was answered. One sync covers every record appended before it,
 *       so many accepts share one sync (group commit).</li>
 * </ul>
 *
 * <p>Chronicle's own {@code SyncMode} calls {@code msync} on the appending thread (when a mapped chunk is released,
 * or on {@code ExcerptAppender.sync()}); that would block the event loop. The journal instead calls
 * {@code fsync} on the cycle file from another thread: on Linux, {@code fsync} writes back pages dirtied through a
 * shared mapping as well ({@code msync(MS_SYNC)} and {@code fsync} end in the same {@code vfs_fsync_range}).
 */
public enum SyncPolicy {
  /** Never forces; the kernel writes back in its own time. Protects against process crashes only. */
  NONE,
  /** Forces every sync interval from a background thread; appends do not wait. */
  ASYNC,
  /** The owner forces with {@link Journal#sync()} before it answers (group commit). */
  SYNC
}
