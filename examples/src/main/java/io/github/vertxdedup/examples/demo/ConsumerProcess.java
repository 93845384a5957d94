package io.github.vertxdedup.examples.demo;

import io.github.vertxdedup.examples.tools.Processes;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One run of the {@link BillingConsumer} in a JVM of its own, as the driver sees it: started with the driver's
 * classpath and the project's JVM flags ({@link Processes#jvmFlags()}), killed with SIGKILL
 * ({@link Process#destroyForcibly()} on Linux) or stopped with a {@code stop} line on its standard input. A thread reads its standard output (the protocol in
 * {@link BillingConsumer}'s javadoc) into the volatile fields below; its standard error goes to
 * {@code consumer-<run>.err} in the work directory.
 *
 * <p>The fields are written by the reader thread and read by the driver's thread.
 */
final class ConsumerProcess {

  final int run;
  final Process process;
  final Path errFile;
  /** When the driver started it, epoch ms. */
  final long launchedAtMs;
  volatile long startedAtMs = -1;
  volatile long subscribedAtMs = -1;
  volatile long assignedAtMs = -1;
  volatile long firstAnswerAtMs = -1;
  volatile long deliveries;
  volatile long handled;
  volatile long dropped;
  volatile long lapsedClaims;
  volatile long inFlightWaits;
  volatile boolean stopped;
  /** When the driver killed it, epoch ms, or -1. */
  volatile long killedAtMs = -1;

  private ConsumerProcess(int run, Process process, Path errFile, long launchedAtMs) {
    this.run = run;
    this.process = process;
    this.errFile = errFile;
    this.launchedAtMs = launchedAtMs;
  }

  /**
   * Starts a consumer JVM.
   *
   * @param run the run number (1 for the first start)
   * @param workDir the demo's work directory (books, logs, journal)
   * @param consumerArgs the {@link BillingConsumer} options
   * @return the started process
   * @throws IOException if the JVM cannot be started or the JVM flags resource is missing
   */
  static ConsumerProcess start(int run, Path workDir, List<String> consumerArgs) throws IOException {
    List<String> jvm = new ArrayList<>(Processes.jvmFlags());
    jvm.add("-Xmx256m");
    List<String> cmd = Processes.javaCommand(jvm, System.getProperty("java.class.path"),
        BillingConsumer.class.getName(), consumerArgs);
    Path err = workDir.resolve("consumer-" + run + ".err");
    long launchedAt = System.currentTimeMillis();
    Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
    ConsumerProcess c = new ConsumerProcess(run, p, err, launchedAt);
    Thread reader = new Thread(() -> c.read(p.getInputStream()), "consumer-" + run + "-out");
    reader.setDaemon(true);
    reader.start();
    return c;
  }

  /** @return the process id */
  long pid() {
    return process.pid();
  }

  /** Kills the process with SIGKILL and waits for it to be gone. */
  void kill() throws InterruptedException {
    killedAtMs = System.currentTimeMillis();
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /**
   * Asks the consumer to stop (drain, commit, write its stats) and waits for it to exit.
   *
   * @param timeoutMs how long to wait
   * @return its exit code, or -1 if it did not exit in time (it is then killed)
   */
  int stop(long timeoutMs) throws InterruptedException {
    try (OutputStream in = process.getOutputStream()) {
      in.write("stop\n".getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      // already gone: its exit code tells
    }
    if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
      return -1;
    }
    return process.exitValue();
  }

  /** @return the last lines of its standard error, for a failure message */
  String errTail(int lines) {
    try {
      List<String> all = Files.readAllLines(errFile);
      return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no standard error: " + e.getMessage() + ")";
    }
  }

  private void read(InputStream stdout) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(stdout, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        String[] f = line.split(" ");
        try {
          switch (f[0]) {
            case "started" -> startedAtMs = Long.parseLong(f[1]);
            case "assigned" -> assignedAtMs = Long.parseLong(f[1]);
            case "first-answer" -> firstAnswerAtMs = Long.parseLong(f[1]);
            case "status" -> {
              deliveries = Long.parseLong(f[1]);
              handled = Long.parseLong(f[2]);
              dropped = Long.parseLong(f[3]);
              lapsedClaims = Long.parseLong(f[4]);
              inFlightWaits = Long.parseLong(f[5]);
            }
            case "stopped" -> stopped = true;
            case "subscribed" -> subscribedAtMs = Long.parseLong(f[1]);
            default -> System.out.println("  consumer " + run + ": " + line);
          }
        } catch (RuntimeException e) {
          System.out.println("  consumer " + run + ": " + line);
        }
      }
    } catch (IOException e) {
      // the process is gone
    }
  }
}
