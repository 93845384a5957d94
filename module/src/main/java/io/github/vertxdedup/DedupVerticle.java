package io.github.vertxdedup;

import io.github.vertxdedup.impl.journal.ChroniclePartitionJournal;
import io.github.vertxdedup.impl.journal.NoJournal;
import io.github.vertxdedup.impl.journal.PartitionJournal;
import io.github.vertxdedup.impl.options.OptionSchema;
import io.github.vertxdedup.impl.protocol.Codecs;
import io.github.vertxdedup.impl.service.AddressRouter;
import io.github.vertxdedup.impl.service.PartitionOwnership;
import io.github.vertxdedup.impl.service.PartitionState;
import io.github.vertxdedup.impl.service.PartitionVerticle;
import io.github.vertxdedup.journal.internal.JournalLayout;
import io.github.vertxdedup.time.DedupClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import io.vertx.micrometer.backends.BackendRegistries;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The event-bus dedup service: deploys one partition verticle per partition it owns, each owning one dedup window on
 * its own event loop, and a router on {@code <address>}. Its start completes when every partition is ready or owned
 * by another deployment.
 *
 * <p>Several deployments of the same service (on the members of a clustered Vert.x, or in one JVM) share its
 * partitions: each partition has at most one owner, decided by a lock and an epoch counter in Vert.x shared data, and
 * the other deployments stand by without registering its address, taking it over when the owner undeploys, dies or
 * loses its epoch ({@code ownerLeaseMs}, {@code ownerCheckMs}, {@code ownerLockPollMs}; see
 * {@code docs/partitioning.md}). A takeover without the previous owner's journal marks new ids unvouched for the
 * window ({@link UnvouchedPolicy}).
 *
 * <p>Deploy it by name with a JSON config ({@link DedupOptions#toJson()} builds one):
 * <pre>{@code
 * vertx.deployVerticle("io.github.vertxdedup.DedupVerticle",
 *     new DeploymentOptions().setConfig(new DedupOptions().setWindow(Duration.ofMinutes(10)).toJson()));
 * }</pre>
 * or deploy an instance, e.g. with a {@link io.github.vertxdedup.time.ManualClock} in tests:
 * {@code vertx.deployVerticle(new DedupVerticle(clock), new DeploymentOptions().setConfig(json))}.
 *
 * <p>The config is read in one of two shapes. When it has a key {@value #CONFIG_KEY}, the options are the JSON object
 * under it and every other key is left alone, so the verticle can be given a configuration that holds more than its
 * own, such as one {@code vertx-config} merges from several stores:
 * <pre>{@code
 * {"dedup": {"address": "payments", "partitions": 8, "windowMs": 600000}, "http": {"port": 8080}}
 * }</pre>
 * Otherwise the whole config is the options, as {@link DedupOptions#toJson()} writes them. Either way the options
 * object is read strictly ({@link DedupOptions#DedupOptions(JsonObject)}): an unknown key or a value of the wrong
 * JSON type inside it fails the deployment with a message naming the key.
 *
 * <p>Callers send requests to {@code <address>.<p>} (see {@link DedupClient}, which computes {@code p}) or to
 * {@code <address>}, which routes single requests by the fingerprint of their {@code key} when
 * {@link DedupOptions#isRouteByKey() routeByKey} is set, else of their {@code id}.
 * The wire contract (actions, fields, verdicts, failure codes) is described in {@code docs/service.md}.
 *
 * <p>Metrics go to the {@link MeterRegistry} set with {@link #setMeterRegistry}, else to the registry of
 * {@code vertx-micrometer-metrics} when Vert.x was started with it, else to Micrometer's global registry. Readiness
 * is reported by one health procedure per partition, named {@code <address>/<p>}, in the {@link HealthChecks} set with
 * {@link #setHealthChecks} or in one this verticle creates ({@link #getHealthChecks()}). A verticle deployed by name
 * cannot be given one: {@link #registerHealthProcedures} registers procedures of the same names in the application's
 * {@link HealthChecks} that ask each partition over the event bus.
 *
 * <p>With {@code journalDir}, partition {@code p} keeps a journal in {@code <journalDir>/<address>/<p>} and rebuilds
 * its window from it at start (see {@code docs/journal.md}); its deployment completes once every partition has
 * recovered, or waits for the journal's lock held by another process (such a partition answers 503 until it can
 * take it over). Without it the service runs memory only and forgets everything on restart.
 *
 * <p>Undeploying stops the partitions first (each answers 503 while it flushes its journal, then unregisters), then
 * the router, which answers 503 at once every request still waiting for a partition; see {@code docs/service.md}.
 *
 * <p>Setters must be called before deployment; the verticle then belongs to its Vert.x context.
 */
public class DedupVerticle extends VerticleBase {

  /**
   * The key of the deployment config under which the options sit when the config holds more than them:
   * {@value}. The same name as the dedup options' key in {@code DedupKafkaOptions}.
   */
  public static final String CONFIG_KEY = "dedup";

  private final DedupClock clock;
  private MeterRegistry meterRegistry;
  private HealthChecks healthChecks;
  private DedupOptions options;
  private final List<PartitionOwnership> ownerships = new ArrayList<>();
  private MessageConsumer<Object> router;
  private AddressRouter routerHandler;
  private Supplier<Future<Void>> stopHold;

  /** Creates the verticle with the system clock; this is what deployment by name uses. */
  public DedupVerticle() {
    this(DedupClock.system());
  }

  /**
   * Creates the verticle with a clock, e.g. a {@link io.github.vertxdedup.time.ManualClock} in tests.
   *
   * @param clock the clock of every partition's window and leases
   */
  public DedupVerticle(DedupClock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Sets the registry of the partitions' meters.
   *
   * @param meterRegistry the registry, or null for the default (see the class documentation)
   * @return this
   */
  public DedupVerticle setMeterRegistry(MeterRegistry meterRegistry) {
    this.meterRegistry = meterRegistry;
    return this;
  }

  /**
   * Sets the health checks the partitions' readiness procedures are registered in.
   *
   * @param healthChecks the health checks, or null to create one at start
   * @return this
   */
  public DedupVerticle setHealthChecks(HealthChecks healthChecks) {
    this.healthChecks = healthChecks;
    return this;
  }

  /** @return the health checks holding the procedures {@code <address>/<p>}; null before start */
  public HealthChecks getHealthChecks() {
    return healthChecks;
  }

  /**
   * Registers in {@code checks} one procedure per partition of the service {@code options} describe, named
   * {@code <address>/<p>} as the verticle's own, that asks the partition over the event bus (the {@code stats}
   * action, sent to {@code <address>.<p>}) whether it answers. For a service deployed by name, whose verticle cannot
   * be handed a {@link HealthChecks}; it also works from another node of a clustered Vert.x. Call it once, before or
   * after the deployment: each check asks anew.
   *
   * <p>A procedure is {@code OK} when the partition answers, with data {@code address}, {@code state}
   * ({@code READY}), {@code held} (ids and keys remembered) and {@code pending} (replies waiting for their journal
   * write). It is {@code KO} when the partition does not answer it as ready: while it recovers its window from its
   * journal, or reopens its journal after a failed write, stops or has failed, or while {@code maxPending} replies
   * wait for the journal (503; {@code failure} is the partition's message), when no partition listens on its address
   * (not deployed, or undeployed), and when no answer comes within {@code timeout}.
   *
   * @param vertx the Vert.x instance (or clustered node) whose event bus reaches the service
   * @param checks the application's health checks
   * @param options the service's options: its {@code address} and {@code partitions}
   * @param timeout how long a procedure waits for its partition's answer; positive. The procedure's own timeout in
   *     {@code checks} is the same
   * @throws IllegalArgumentException if {@code timeout} is not positive, or the options are invalid (the message
   *     names the field)
   * @throws NullPointerException if an argument is null
   */
  public static void registerHealthProcedures(Vertx vertx, HealthChecks checks, DedupOptions options,
      Duration timeout) {
    Objects.requireNonNull(vertx, "vertx");
    Objects.requireNonNull(checks, "checks");
    Objects.requireNonNull(timeout, "timeout");
    DedupOptions o = new DedupOptions(Objects.requireNonNull(options, "options")).validate();
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be > 0 but was " + timeout);
    }
    long timeoutMs = Math.max(1, timeout.toMillis());
    for (int p = 0; p < o.getPartitions(); p++) {
      String address = o.getAddress() + "." + p;
      checks.register(o.getAddress() + "/" + p, timeoutMs, promise -> vertx.eventBus()
          .request(address, null, new DeliveryOptions().setSendTimeout(timeoutMs)
              .addHeader(DedupAction.HEADER, DedupAction.STATS.wireName()))
          .onComplete(ar -> promise.complete(busStatus(address, ar))));
    }
  }

  /** The status of a partition from its answer to {@code stats}, or from the failure in its place. */
  private static Status busStatus(String address, AsyncResult<Message<Object>> ar) {
    JsonObject data = new JsonObject().put("address", address);
    if (ar.failed()) {
      String state = ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS
          ? "NOT_DEPLOYED" : ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.TIMEOUT
          ? "NO_ANSWER" : "UNAVAILABLE";
      return Status.KO(data.put("state", state).put("failure", String.valueOf(ar.cause().getMessage())));
    }
    JsonObject stats = ar.result().body() instanceof JsonObject j ? j : new JsonObject();
    data.put("state", stats.getString("state", "UNKNOWN")).put("held", stats.getValue("held"))
        .put("pending", stats.getValue("pending"));
    return PartitionState.READY.name().equals(data.getString("state")) ? Status.OK(data) : Status.KO(data);
  }

  /** @return the options in force; null before start */
  public DedupOptions getOptions() {
    return options == null ? null : new DedupOptions(options);
  }

  @Override
  public Future<?> start() {
    try {
      options = optionsOf(config()).validate();
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("invalid DedupVerticle config: " + e.getMessage(), e));
    }
    Codecs.register(vertx);
    if (options.getJournalDir() == null) {
      return deployPartitions();
    }
    Path addressDir = Path.of(options.getJournalDir(), options.getAddress());
    return vertx.executeBlocking(() -> {
      JournalLayout.checkLayout(addressDir, options.getPartitions(), options.isRouteByKey());
      return null;
    }, false).recover(e -> Future.failedFuture(
        new IllegalArgumentException("invalid DedupVerticle config: " + e.getMessage(), e)))
        .compose(v -> deployPartitions());
  }

  /**
   * Reads the options from a deployment config: the object under {@value #CONFIG_KEY} if the config has that key,
   * else the whole config (see the class documentation).
   *
   * @throws IllegalArgumentException if {@value #CONFIG_KEY} is not a JSON object, or as
   *     {@link DedupOptions#DedupOptions(JsonObject)}
   */
  private static DedupOptions optionsOf(JsonObject config) {
    if (config == null) {
      return new DedupOptions();
    }
    if (!config.containsKey(CONFIG_KEY)) {
      return new DedupOptions(config);
    }
    Object nested = config.getValue(CONFIG_KEY);
    if (!(nested instanceof JsonObject options)) {
      throw new IllegalArgumentException("config key '" + CONFIG_KEY + "' must be a JSON object (the dedup options)"
          + " but was " + OptionSchema.describe(nested));
    }
    return new DedupOptions(options);
  }

  private Future<?> deployPartitions() {
    MeterRegistry registry = meterRegistry != null ? meterRegistry : defaultRegistry();
    if (healthChecks == null) {
      healthChecks = HealthChecks.create(vertx);
    }
    List<Future<Void>> deployed = new ArrayList<>();
    // Vert.x numbers deployments per JVM ("1", "2", ...): the JVM's name (pid@host) tells the members apart.
    String owner = context.deploymentID() + "@" + ManagementFactory.getRuntimeMXBean().getName();
    for (int p = 0; p < options.getPartitions(); p++) {
      final int partitionNumber = p;
      Path partitionDir = options.getJournalDir() == null
          ? null
          : Path.of(options.getJournalDir(), options.getAddress(), Integer.toString(p));
      // One partition verticle per owner's term: deployed when this deployment takes the partition, undeployed when
      // it steps down or stops (see PartitionOwnership and docs/partitioning.md).
      PartitionOwnership ownership = PartitionOwnership.of(vertx, context, options, p, clock, owner, partitionDir,
          () -> new PartitionVerticle(options, partitionNumber, clock, partitionDir == null
              ? NoJournal.INSTANCE
              : new ChroniclePartitionJournal(vertx, partitionDir, options.getWindowMs(), options.getJournalSync(),
                  clock, options.getJournalSnapshotEntries()), registry));
      ownerships.add(ownership);
      // Registered first, so that the health check reports a partition that is still recovering.
      healthChecks.register(procedureName(p), promise -> promise.complete(status(ownership)));
      deployed.add(ownership.start());
    }
    return Future.all(deployed).compose(v -> {
      routerHandler = new AddressRouter(vertx, options);
      router = vertx.eventBus().consumer(options.getAddress(), routerHandler);
      return router.completion();
    });
  }

  /**
   * Tests only: {@link #stop()} calls {@code hold} first (every partition has stopped by then, the router still
   * routes) and goes on once the returned future completes.
   */
  void stopHold(Supplier<Future<Void>> hold) {
    this.stopHold = hold;
  }

  @Override
  public Future<?> stop() {
    for (PartitionOwnership ownership : ownerships) {
      healthChecks.unregister(procedureName(ownership.partitionNumber()));
    }
    // The partitions are child deployments: Vert.x has undeployed (drained) them before this runs.
    Future<Void> held = Future.succeededFuture();
    if (stopHold != null) {
      Promise<Void> released = Promise.promise();
      stopHold.get().onComplete(ar -> context.runOnContext(v -> released.handle(ar)));
      held = released.future();
    }
    return held.compose(v -> {
      // Clean releases: each owner marks its epoch released and lets its lock go, so a standby takes over at once.
      List<Future<Void>> released = new ArrayList<>();
      for (PartitionOwnership ownership : ownerships) {
        released.add(ownership.stop());
      }
      return Future.join(released).mapEmpty();
    }).compose(v -> {
      if (router == null) {
        return Future.succeededFuture();
      }
      // Answer what still waits for a partition now: once this stop completes, Vert.x closes this verticle's
      // context and with it the reply handlers of the forwarded requests, so a later answer would reach nobody.
      routerHandler.stop();
      return router.unregister();
    });
  }

  private String procedureName(int partition) {
    return options.getAddress() + "/" + partition;
  }

  private Status status(PartitionOwnership ownership) {
    PartitionVerticle partition = ownership.partition();
    JsonObject data = new JsonObject().put("role", ownership.role().name());
    if (partition == null) {
      // A standby is healthy as a standby: another deployment answers for the partition.
      return Status.OK(data.put("address", options.getAddress() + "." + ownership.partitionNumber())
          .put("state", ownership.role().name()));
    }
    data.put("address", partition.address()).put("state", partition.state().name()).put("epoch", ownership.epoch());
    if (!partition.failure().isEmpty()) {
      data.put("failure", partition.failure());
    }
    return partition.state() == PartitionState.READY ? Status.OK(data) : Status.KO(data);
  }

  private static MeterRegistry defaultRegistry() {
    MeterRegistry vertxRegistry = BackendRegistries.getDefaultNow();
    return vertxRegistry != null ? vertxRegistry : Metrics.globalRegistry;
  }
}
