package io.github.vertxdedup.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;

/**
 * The exclusive lock of one journal directory: an OS file lock ({@link FileChannel#tryLock()}, {@code fcntl} on
 * Linux) on {@value #FILE_NAME}, held while the journal is open. The operating system drops it when its holder
 * closes it or dies, even before a killed process is reaped, so holding it proves every earlier owner is gone;
 * {@link Journal#open} relies on that to clear locks Chronicle left behind (see {@code ChronicleLocks}).
 *
 * <p>The holder writes {@code pid=... acquiredAt=...} into the file, so that a second opener can name it.
 */
final class DirectoryLock implements AutoCloseable {

  static final String FILE_NAME = "journal.lock";

  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  static DirectoryLock acquire(Path dir) {
    Path file = dir.resolve(FILE_NAME);
    FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the journal lock file " + file, e);
    }
    try {
      FileLock lock;
      String inThisProcess = "";
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
        inThisProcess = ", in this process";
      }
      if (lock == null) {
        String holder = readHolder(channel) + inThisProcess;
        channel.close();
        throw new JournalLockedException(dir, holder);
      }
      String me = "pid=" + ProcessHandle.current().pid() + " acquiredAt=" + Instant.now();
      channel.truncate(0);
      channel.write(ByteBuffer.wrap(me.getBytes(StandardCharsets.UTF_8)), 0);
      return new DirectoryLock(channel, lock);
    } catch (IOException e) {
      closeQuietly(channel);
      throw new UncheckedIOException("cannot lock the journal directory " + dir, e);
    } catch (RuntimeException e) {
      closeQuietly(channel);
      throw e;
    }
  }

  private static String readHolder(FileChannel channel) {
    try {
      ByteBuffer buf = ByteBuffer.allocate(256);
      int n = channel.read(buf, 0);
      String s = n <= 0 ? "" : new String(buf.array(), 0, n, StandardCharsets.UTF_8).trim();
      return s.isEmpty() ? "unknown" : s;
    } catch (IOException e) {
      return "unknown";
    }
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // already failing; the first error is the one reported
    }
  }

  @Override
  public void close() {
    try {
      lock.release();
    } catch (IOException ignored) {
      // closing the channel below releases it too
    }
    closeQuietly(channel);
  }
}
