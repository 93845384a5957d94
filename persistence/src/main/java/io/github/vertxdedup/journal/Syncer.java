package io.github.vertxdedup.journal;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentLinkedQueue;

/*
 * Forces appended records to disk from any thread while the owner's thread keeps appending: the group commit.
 *
 * The appender publishes, after each append, the index of its last record (a volatile write that follows the
 * record's bytes in the mapped file) and, when it enters a new cycle file, that file; the file it leaves goes to a
 * queue of files still to force. sync() reads the last index, then the current file, then drains the queue (in that
 * order, so a roll between the reads cannot hide a file), fsyncs each file with FileChannel.force, and the
 * directory when a file was created, and only then publishes the index as synced. Calls are serialised; a call
 * whose records an earlier call already covered returns at once, and one sync covers every record appended before
 * it started: many accepts per fsync.
 *
 * fsync through a separate descriptor writes back pages dirtied through Chronicle's shared mapping: on Linux,
 * msync(MS_SYNC) and fsync both end in vfs_fsync_range on the file.
 */
final class Syncer implements AutoCloseable {

  static final long NOTHING = Long.MIN_VALUE;

  private final Path dir;
  private final ConcurrentLinkedQueue<File> rolledFiles = new ConcurrentLinkedQueue<>();
  private volatile long appendedIndex = NOTHING;
  private volatile File currentFile;
  private volatile boolean directoryDirty;
  private volatile long syncedIndex = NOTHING;

  private final Object lock = new Object();
  private FileChannel channel;
  private File channelFile;

  Syncer(Path dir) {
    this.dir = dir;
  }

  /** Owner's thread: a record with this index was appended to {@code file}. */
  void appended(long index, File file) {
    File current = currentFile;
    if (file != current && (current == null || !current.equals(file))) {
      if (current != null) {
        rolledFiles.add(current);
      }
      directoryDirty = true;
      currentFile = file;
    }
    appendedIndex = index;
  }

  long appendedIndex() {
    return appendedIndex;
  }

  long syncedIndex() {
    return syncedIndex;
  }

  /** Forces every record appended before the call; returns the index up to which all records are durable. */
  long sync() throws IOException {
    long wanted = appendedIndex;
    synchronized (lock) {
      if (wanted == NOTHING || syncedIndex >= wanted) {
        return syncedIndex;
      }
      long target = appendedIndex;
      File current = currentFile;
      File rolled;
      while ((rolled = rolledFiles.poll()) != null) {
        if (!rolled.equals(current)) {
          forceOnce(rolled);
        }
      }
      if (directoryDirty) {
        directoryDirty = false;
        forceDirectory();
      }
      forceCurrent(current);
      syncedIndex = target;
      return target;
    }
  }

  private void forceCurrent(File file) throws IOException {
    if (channel == null || !file.equals(channelFile)) {
      closeChannel();
      channel = FileChannel.open(file.toPath(), StandardOpenOption.READ);
      channelFile = file;
    }
    channel.force(false);
  }

  private static void forceOnce(File file) throws IOException {
    try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
      ch.force(false);
    } catch (NoSuchFileException deleted) {
      // retention removed it: nothing in it is needed any more
    }
  }

  private void forceDirectory() throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some file systems refuse to open or fsync a directory; the files themselves were forced.
    }
  }

  private void closeChannel() {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // only a read descriptor
      }
      channel = null;
      channelFile = null;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      closeChannel();
    }
  }
}
