package io.github.vertxdedup.kafka;

import io.github.vertxdedup.impl.options.OptionSchema;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.pointer.JsonPointer;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DedupKafkaConsumer} as a verticle, configured by JSON: it consumes Kafka topics with a dedup window per
 * topic-partition and sends each accepted record to an event-bus address as a request, whose reply is the handler's
 * outcome. Deploy it by name:
 * <pre>{@code
 * vertx.deployVerticle("io.github.vertxdedup.kafka.DedupKafkaVerticle",
 *     new DeploymentOptions().setConfig(new JsonObject().put("dedupKafka", options.toJson())));
 * }</pre>
 * where {@code options} is a {@link DedupKafkaVerticleOptions} (or the same JSON from a file; see
 * {@code docs/kafka.md}, "Deploy from configuration").
 *
 * <p>The config is read in one of two shapes, as {@link io.github.vertxdedup.DedupVerticle}'s is. When it has a key
 * {@value #CONFIG_KEY}, the options are the JSON object under it and every other key is left alone, so the verticle
 * can be given a configuration that holds more than its own, such as one {@code vertx-config} merges from several
 * stores. Otherwise the whole config is the options. Either way the options object is read strictly
 * ({@link DedupKafkaVerticleOptions#DedupKafkaVerticleOptions(JsonObject)}): an unknown key or a value of the wrong
 * JSON type inside it fails the deployment with a message naming the key; so does a missing address, topic list or
 * identity, and a Kafka config the consumer refuses (no {@code group.id}, {@code enable.auto.commit=true}).
 *
 * <h2>A record's request</h2>
 * Each record the window accepts is sent to {@code address} with {@code eventBus().request} and a send timeout of
 * {@code requestTimeoutMs}; the body is the JSON object described in {@code docs/kafka.md} (topic, partition, offset,
 * timestamp, key, value, headers). Any reply is the handler's success: the record is done with (in
 * {@link AtomicityMode#EFFECT_FIRST}, its claim is then committed). A failure reply ({@code message.fail}) or no reply
 * within the timeout is the handler's failure: retried with backoff, and after {@code maxAttempts} a dead letter,
 * exactly as a Java {@link RecordHandler}'s failed future. No consumer at the address ({@code NO_HANDLERS}) is not a
 * failure: the partition pauses and the record is sent again with backoff until one registers, without using up its
 * attempts (as for every handler; {@link DedupKafkaConsumer}). One record at a time per topic-partition, in offset
 * order; duplicates are never sent.
 *
 * <h2>Dead letters</h2>
 * With {@code deadLetterAddress}, each dead letter is sent there as a request (the record's body plus
 * {@code reason}, {@code detail}, {@code attempts}, {@code cause}) and is done with once any reply comes back; a
 * failure or timeout is retried until one does. Without it, dead letters are logged at WARN and counted.
 *
 * <h2>Life</h2>
 * {@link #start()} completes once the consumer has subscribed (records flow when the group assigns partitions).
 * {@link #stop()} closes the consumer: it drains and commits every partition and leaves the group. If the consumer
 * stops on an error of its own (a window that cannot be opened, see {@link DedupKafkaConsumer#exceptionHandler}),
 * the verticle logs it at ERROR and undeploys itself, so that its deployment does not outlive its consumer.
 *
 * <h2>Health</h2>
 * A verticle deployed by name cannot hand its consumer out: {@link #registerHealthProcedure} registers, in the
 * application's {@code HealthChecks}, one procedure over the consumers of every {@code DedupKafkaVerticle} deployed
 * in the Vert.x instance, each one's {@link DedupKafkaConsumer#health()}.
 *
 * <p>Each deployed instance is one consumer of the group; with {@code DeploymentOptions.setInstances(n)} the
 * instances share the group's partitions (do not give them one {@code group.instance.id}: Kafka lets only one
 * member hold it). Records are handed over on the partitions' event loops, not on this verticle's context.
 */
public class DedupKafkaVerticle extends VerticleBase {

  /** The key of the deployment config under which the options sit when the config holds more than them: {@value}. */
  public static final String CONFIG_KEY = "dedupKafka";

  private static final Logger LOG = LoggerFactory.getLogger(DedupKafkaVerticle.class);
  /** Local map of the consumers of the verticles deployed in a Vert.x instance, by deployment id. */
  private static final String CONSUMERS = "io.github.vertxdedup.kafka.verticle-consumers";

  private DedupKafkaVerticleOptions options;
  private DedupKafkaConsumer<Object, Object> consumer;
  /** The failure that stopped the consumer, reported already; {@link #stop()} does not fail with it again. */
  private Throwable stoppedBy;

  /** Creates the verticle; this is what deployment by name uses. */
  public DedupKafkaVerticle() {
  }

  /**
   * Registers in {@code checks} a procedure named {@code name} over the consumers of every {@code DedupKafkaVerticle}
   * deployed in {@code vertx}, now or later (each deployment instance is one consumer). {@code OK} when at least one
   * is deployed and every one's {@link DedupKafkaConsumer#health()} is; its data: {@code consumers}, one object per
   * deployment instance, keyed {@code <deployment id>#<n>} ({@code n} tells a deployment's instances apart),
   * holding its health's data.
   * {@code KO} with {@code state} {@code NOT_DEPLOYED} while none is. Call it once, before or after the deployments.
   *
   * @param vertx the Vert.x instance the verticles are deployed in
   * @param checks the application's health checks
   * @param name the procedure's name, e.g. {@code "payments-consumer"}
   * @throws NullPointerException if an argument is null
   */
  public static void registerHealthProcedure(Vertx vertx, HealthChecks checks, String name) {
    Objects.requireNonNull(vertx, "vertx");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(checks, "checks").register(name, promise -> {
      LocalMap<String, Deployed> deployed = vertx.sharedData().getLocalMap(CONSUMERS);
      JsonObject consumers = new JsonObject();
      boolean ok = !deployed.isEmpty();
      for (Map.Entry<String, Deployed> e : new TreeMap<>(deployed).entrySet()) {
        Status s = e.getValue().consumer.health();
        ok &= s.isOk();
        consumers.put(e.getKey(), s.getData());
      }
      JsonObject data = deployed.isEmpty() ? new JsonObject().put("state", "NOT_DEPLOYED")
          : new JsonObject().put("consumers", consumers);
      promise.complete(ok ? Status.OK(data) : Status.KO(data));
    });
  }

  /** A deployed verticle's consumer, in the local map {@link #CONSUMERS}: shared by reference. */
  private record Deployed(DedupKafkaConsumer<?, ?> consumer) implements Shareable {
  }

  /** @return the options in force; null before start */
  public DedupKafkaVerticleOptions getOptions() {
    return options == null ? null : new DedupKafkaVerticleOptions(options);
  }

  @Override
  public Future<?> start() {
    try {
      options = optionsOf(config()).validate();
      consumer = DedupKafkaConsumer.create(vertx, kafkaConfig(options), options.getOptions());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("invalid DedupKafkaVerticle config: " + e.getMessage(),
          e));
    }
    // The handlers run on the partitions' event loops: they read only what they capture here.
    DeliveryOptions delivery = new DeliveryOptions().setSendTimeout(options.getRequestTimeoutMs());
    String address = options.getAddress();
    String deadLetterAddress = options.getDeadLetterAddress();
    consumer.identity(identity(options))
        .handler(record -> request(address, RecordMessages.record(record), delivery))
        .exceptionHandler(this::consumerStopped);
    if (deadLetterAddress != null) {
      consumer.deadLetterHandler(dead -> request(deadLetterAddress, RecordMessages.deadLetter(dead), delivery));
    }
    consumers().put(consumerKey(), new Deployed(consumer));
    return consumer.subscribe(new LinkedHashSet<>(options.getTopics())).onSuccess(v -> LOG.info(
        "dedup consumer {} of group {} subscribed to {}; records go to {}", consumer.instanceId(),
        options.getKafkaConfig().get(ConsumerConfig.GROUP_ID_CONFIG), options.getTopics(), options.getAddress()));
  }

  @Override
  public Future<?> stop() {
    if (consumer == null) {
      return Future.succeededFuture();
    }
    consumers().remove(consumerKey());
    return consumer.close().recover(e -> e == stoppedBy ? Future.succeededFuture() : Future.failedFuture(e));
  }

  private LocalMap<String, Deployed> consumers() {
    return vertx.sharedData().getLocalMap(CONSUMERS);
  }

  /** This verticle's key in {@link #CONSUMERS}: its deployment id, and which of the deployment's instances it is. */
  private String consumerKey() {
    return context.deploymentID() + "#" + System.identityHashCode(this);
  }

  /**
   * Reads the options from a deployment config: the object under {@value #CONFIG_KEY} if the config has that key,
   * else the whole config.
   *
   * @throws IllegalArgumentException if {@value #CONFIG_KEY} is not a JSON object, or as
   *     {@link DedupKafkaVerticleOptions#DedupKafkaVerticleOptions(JsonObject)}; without {@value #CONFIG_KEY}, an
   *     unknown key's message adds that the options belong under {@value #CONFIG_KEY}
   */
  private static DedupKafkaVerticleOptions optionsOf(JsonObject config) {
    if (config == null || !config.containsKey(CONFIG_KEY)) {
      try {
        return new DedupKafkaVerticleOptions(config == null ? new JsonObject() : config);
      } catch (IllegalArgumentException e) {
        if (e.getMessage() != null && e.getMessage().startsWith("unknown ")) {
          // Most likely a configuration that holds more than this verticle's options, without the key.
          throw new IllegalArgumentException(e.getMessage() + "; the config has no '" + CONFIG_KEY + "' key, so the "
              + "whole config was read as the verticle's options: put them under \"" + CONFIG_KEY + "\" when the "
              + "config holds other keys", e);
        }
        throw e;
      }
    }
    Object nested = config.getValue(CONFIG_KEY);
    if (!(nested instanceof JsonObject json)) {
      throw new IllegalArgumentException("config key '" + CONFIG_KEY + "' must be a JSON object (the dedup kafka"
          + " verticle options) but was " + OptionSchema.describe(nested));
    }
    return new DedupKafkaVerticleOptions(json);
  }

  /** The consumer's Kafka config: the options' settings, with Kafka's string deserializers unless they name others. */
  private static Map<String, String> kafkaConfig(DedupKafkaVerticleOptions options) {
    Map<String, String> config = options.getKafkaConfig();
    config.putIfAbsent(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    config.putIfAbsent(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    return config;
  }

  private static IdentityExtractor<Object, Object> identity(DedupKafkaVerticleOptions options) {
    if (options.getIdentityHeader() != null) {
      return IdentityExtractor.header(options.getIdentityHeader());
    }
    if (options.isIdentityRecordKey()) {
      return IdentityExtractor.recordKey();
    }
    JsonPointer pointer = JsonPointer.from(options.getIdentityValuePointer());
    return IdentityExtractor.of(record -> RecordMessages.idAt(record.value(), pointer));
  }

  /** Sends a request; any reply completes it, a failure reply or a timeout fails it. */
  private Future<Void> request(String address, JsonObject body, DeliveryOptions delivery) {
    return vertx.eventBus().request(address, body, delivery).mapEmpty();
  }

  private void consumerStopped(Throwable failure) {
    stoppedBy = failure;
    LOG.error("dedup consumer {} stopped on an error and left its group; undeploying the verticle {}",
        consumer.instanceId(), deploymentID(), failure);
    vertx.undeploy(deploymentID());
  }
}
