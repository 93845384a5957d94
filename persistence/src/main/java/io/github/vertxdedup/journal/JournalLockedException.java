package io.github.vertxdedup.journal;

import java.nio.file.Path;

/**
 * {@link Journal#open} found the directory locked by another owner: another process, or another {@link Journal} in
 * this one. A partition answers "unavailable" and retries; the lock is released when its holder closes the journal
 * or dies (the operating system drops a dead process's file locks).
 */
public class JournalLockedException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final transient Path directory;
  /** Who holds the lock, as its holder wrote it in the lock file ({@code pid=... acquiredAt=...}). */
  private final String holder;

  JournalLockedException(Path directory, String holder) {
    super("journal directory " + directory + " is locked by another owner (" + holder + ")");
    this.directory = directory;
    this.holder = holder;
  }

  /**
   * Returns the directory that is locked.
   *
   * @return the journal directory
   */
  public Path directory() {
    return directory;
  }

  /**
   * Returns what the holder wrote into the lock file ({@code pid=... acquiredAt=...}), or {@code "unknown"}.
   *
   * @return a description of the holder
   */
  public String holder() {
    return holder;
  }
}
