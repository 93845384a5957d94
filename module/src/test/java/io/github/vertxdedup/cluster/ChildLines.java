package io.github.vertxdedup.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/** The standard output of a child JVM, line by line, read on a daemon thread so the child never blocks on a full pipe. */
final class ChildLines {

  private ChildLines() {}

  /**
   * @param child a started child process
   * @return its output lines as they come; a read failure is added as a line {@code reader failed: <cause>}
   */
  static BlockingQueue<String> of(Process child) {
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = out.readLine()) != null; ) {
          lines.add(line);
        }
      } catch (Exception e) {
        lines.add("reader failed: " + e);
      }
    });
    reader.setDaemon(true);
    reader.start();
    return lines;
  }
}
