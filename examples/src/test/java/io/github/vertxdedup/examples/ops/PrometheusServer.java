package io.github.vertxdedup.examples.ops;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real Prometheus server, a child process on a free loopback port, that scrapes one target every second and
 * evaluates rules files every second, with its configuration and its storage in a temporary directory of its own.
 * {@link #close} stops it and deletes the directory. Not thread-safe: one test thread uses it.
 */
final class PrometheusServer implements AutoCloseable {

  /** The scrape and rule evaluation interval. */
  static final Duration SCRAPE_INTERVAL = Duration.ofSeconds(1);

  private final Path dir;
  private final Process process;
  private final int port;
  private final HttpClient http = HttpClient.newHttpClient();

  private PrometheusServer(Path dir, Process process, int port) {
    this.dir = dir;
    this.process = process;
    this.port = port;
  }

  /**
   * Writes a {@code prometheus.yml} that scrapes {@code target} and loads {@code ruleFiles}, and starts
   * {@code prometheus} on it with a temporary {@code --storage.tsdb.path}. Returns at once: wait for the scrape with
   * {@link #targetsUp}.
   *
   * @param prometheus the {@code prometheus} executable
   * @param target the {@code host:port} to scrape
   * @param metricsPath the path of its metrics, e.g. {@code /metrics}
   * @param ruleFiles the rules files to load
   * @return the started server
   * @throws IOException if the directory cannot be written or the process not started
   */
  static PrometheusServer start(Path prometheus, String target, String metricsPath, List<Path> ruleFiles)
      throws IOException {
    Path dir = Files.createTempDirectory("prometheus-test");
    try {
      int port = freeLoopbackPort();
      long seconds = SCRAPE_INTERVAL.toSeconds();
      StringBuilder config = new StringBuilder()
          .append("global:\n")
          .append("  scrape_interval: ").append(seconds).append("s\n")
          .append("  scrape_timeout: ").append(seconds).append("s\n")
          .append("  evaluation_interval: ").append(seconds).append("s\n")
          .append("rule_files:\n");
      for (Path f : ruleFiles) {
        config.append("  - '").append(f.toAbsolutePath()).append("'\n");
      }
      config.append("scrape_configs:\n")
          .append("  - job_name: vertx-dedup-example\n")
          .append("    metrics_path: '").append(metricsPath).append("'\n")
          .append("    static_configs:\n")
          .append("      - targets: ['").append(target).append("']\n");
      Path configFile = Files.writeString(dir.resolve("prometheus.yml"), config.toString());
      Process process = new ProcessBuilder(prometheus.toString(),
          "--config.file=" + configFile,
          "--storage.tsdb.path=" + dir.resolve("data"),
          "--web.listen-address=127.0.0.1:" + port)
          .redirectErrorStream(true)
          .redirectOutput(dir.resolve("prometheus.log").toFile())
          .start();
      return new PrometheusServer(dir, process, port);
    } catch (IOException | RuntimeException e) {
      deleteTree(dir);
      throw e;
    }
  }

  private static int freeLoopbackPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** @return the server's log so far, for an assertion's message */
  String log() {
    try {
      return Files.readString(dir.resolve("prometheus.log"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** @return true while the process runs */
  boolean alive() {
    return process.isAlive();
  }

  /**
   * Asks {@code GET /api/v1/<path>} and returns the answer's JSON.
   *
   * @param pathAndQuery the path below {@code /api/v1/}, with its query string
   * @return the answer: {@code status}, {@code data} or {@code error}
   * @throws IOException if the server does not answer with JSON (not started or not ready yet, or stopped)
   * @throws InterruptedException if interrupted
   */
  JsonObject api(String pathAndQuery) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/"
        + pathAndQuery)).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    if (!r.body().startsWith("{")) {
      // Until its storage is open the server answers every request with 503 and a line of text.
      throw new IOException("prometheus answered " + r.statusCode() + ": " + r.body().strip());
    }
    return new JsonObject(r.body());
  }

  /**
   * @return the health of every active target ({@code up}, {@code down}, {@code unknown}) and its last error, or an
   *     empty list if the server is not ready yet
   * @throws InterruptedException if interrupted
   */
  List<String> targetsUp() throws InterruptedException {
    List<String> states = new ArrayList<>();
    try {
      JsonArray active = api("targets?state=active").getJsonObject("data").getJsonArray("activeTargets");
      for (Object t : active) {
        JsonObject target = (JsonObject) t;
        states.add(target.getString("health") + " " + target.getString("scrapeUrl") + " "
            + target.getString("lastError"));
      }
    } catch (IOException e) {
      // not listening, or not ready, yet
    }
    return states;
  }

  /**
   * Evaluates an instant query now ({@code /api/v1/query}).
   *
   * @param promQl the expression
   * @return the answer: {@code status} and {@code data.result}, or {@code error}
   * @throws IOException if the server does not answer
   * @throws InterruptedException if interrupted
   */
  JsonObject query(String promQl) throws IOException, InterruptedException {
    return api("query?query=" + URLEncoder.encode(promQl, StandardCharsets.UTF_8));
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and deletes its directory. */
  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
    deleteTree(dir);
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("deleting " + root, e);
    }
  }
}
