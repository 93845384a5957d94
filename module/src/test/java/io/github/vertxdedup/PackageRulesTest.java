package io.github.vertxdedup;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.properties.HasName;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.domain.JavaClass;
import io.github.vertxdedup.journal.Journal;
import io.github.vertxdedup.kafka.testkit.LocalKafka;
import java.net.URL;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The rules the packages' {@code package-info.java} state ("may use", "must not use"), checked against what the
 * compiled production classes of both artifacts (this module and {@code persistence}) really depend on, so that a
 * package-info cannot drift from the code. A rule names the package it holds for; a failure lists every offending
 * dependency with its class and line.
 */
class PackageRulesTest {

  private static final String ROOT = "io.github.vertxdedup";
  private static final String WINDOW = ROOT + ".window";
  private static final String TIME = ROOT + ".time";
  private static final String JOURNAL = ROOT + ".journal";
  private static final String JOURNAL_INTERNAL = ROOT + ".journal.internal";
  private static final String KAFKA = ROOT + ".kafka";
  private static final String KAFKA_IMPL = ROOT + ".kafka.impl";
  private static final String TOOLS = ROOT + ".tools";
  private static final String IMPL_SERVICE = ROOT + ".impl.service";
  private static final String IMPL_PROTOCOL = ROOT + ".impl.protocol";
  private static final String IMPL_CLIENT = ROOT + ".impl.client";
  private static final String IMPL_JOURNAL = ROOT + ".impl.journal";
  private static final String IMPL_OPTIONS = ROOT + ".impl.options";
  /** Every package of the {@code module} artifact, for the rules of the persistence artifact. */
  private static final String INBOX = ROOT + ".inbox";
  private static final String INBOX_IMPL = INBOX + ".impl";
  private static final String[] MODULE_ARTIFACT = {ROOT, WINDOW, KAFKA + "..", TOOLS, ROOT + ".impl..", INBOX + ".."};

  /**
   * The production classes of both artifacts, read from where this JVM loaded them ({@code target/classes}, or the
   * jar once the build has packaged it): no test class, and no other jar to scan.
   */
  private static final JavaClasses CLASSES = new ClassFileImporter()
      .importUrls(List.of(codeSource(DedupVerticle.class), codeSource(Journal.class)));

  private static URL codeSource(Class<?> c) {
    return c.getProtectionDomain().getCodeSource().getLocation();
  }

  /**
   * No package is split between the published artifacts ({@code vertx-dedup}, {@code vertx-dedup-persistence},
   * {@code vertx-dedup-kafka-testkit}): each names its own module in its manifest ({@code Automatic-Module-Name}),
   * and two modules on the module path must not hold the same package.
   */
  @Test
  void artifacts_shareNoPackage() {
    Set<String> module = packagesOf(DedupVerticle.class);
    Set<String> persistence = packagesOf(Journal.class);
    Set<String> testkit = packagesOf(LocalKafka.class);

    assertThat(module).contains(ROOT, WINDOW, TOOLS);
    assertThat(persistence).contains(JOURNAL, TIME);
    assertThat(testkit).contains(ROOT + ".kafka.testkit");
    assertThat(intersection(module, persistence)).as("packages in vertx-dedup and vertx-dedup-persistence").isEmpty();
    assertThat(intersection(module, testkit)).as("packages in vertx-dedup and vertx-dedup-kafka-testkit").isEmpty();
    assertThat(intersection(persistence, testkit))
        .as("packages in vertx-dedup-persistence and vertx-dedup-kafka-testkit").isEmpty();
  }

  /** The packages of the artifact {@code c} was loaded from (its {@code target/classes}, or its jar). */
  private static Set<String> packagesOf(Class<?> c) {
    return new ClassFileImporter().importUrls(List.of(codeSource(c))).stream()
        .map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new));
  }

  private static Set<String> intersection(Set<String> a, Set<String> b) {
    Set<String> both = new HashSet<>(a);
    both.retainAll(b);
    return both;
  }

  @Test
  void window_usesOnlyTheClockTheJdkAgronaAndTheHash() {
    classes().that().resideInAPackage(WINDOW)
        .should().onlyDependOnClassesThat().resideInAnyPackage(WINDOW, TIME, "java..", "org.agrona..",
            "net.openhft.hashing..")
        .check(CLASSES);
  }

  @Test
  void time_usesOnlyTheJdk() {
    classes().that().resideInAPackage(TIME)
        .should().onlyDependOnClassesThat().resideInAnyPackage(TIME, "java..")
        .check(CLASSES);
  }

  @Test
  void journal_usesNoVertxNoWindowAndNothingOfTheModuleArtifact() {
    noClasses().that().resideInAnyPackage(JOURNAL, JOURNAL_INTERNAL)
        .should().dependOnClassesThat().resideInAnyPackage("io.vertx..")
        .orShould().dependOnClassesThat().resideInAnyPackage(MODULE_ARTIFACT)
        .check(CLASSES);
  }

  @Test
  void journalApi_reachesItsInternalPackageOnlyFromJournalContents() {
    noClasses().that().resideInAPackage(JOURNAL)
        .and().doNotHaveFullyQualifiedName(JOURNAL + ".JournalContents")
        .should().dependOnClassesThat().resideInAPackage(JOURNAL_INTERNAL)
        .check(CLASSES);
  }

  @Test
  void kafkaImpl_reachesThePartitionOnlyThroughItsNarrowInterface() {
    DescribedPredicate<HasName> narrowInterface = nameMatching(
        "io\\.github\\.vertxdedup\\.impl\\.service\\.(LocalPartition|PartitionState)(\\$.*)?");
    noClasses().that().resideInAPackage(KAFKA_IMPL)
        .should().dependOnClassesThat().resideInAnyPackage(IMPL_PROTOCOL, IMPL_JOURNAL, IMPL_CLIENT)
        .orShould().dependOnClassesThat().haveFullyQualifiedName(IMPL_SERVICE + ".PartitionVerticle")
        .orShould().dependOnClassesThat(resideInAPackage(IMPL_SERVICE).and(not(narrowInterface)))
        .check(CLASSES);
  }

  @Test
  void kafkaImpl_isUsedOnlyByTheKafkaPackages() {
    noClasses().that().resideOutsideOfPackages(KAFKA, KAFKA_IMPL)
        .should().dependOnClassesThat().resideInAPackage(KAFKA_IMPL)
        .check(CLASSES);
  }

  @Test
  void kafka_usesNoneOfTheServicesImplementation() {
    noClasses().that().resideInAPackage(KAFKA)
        .should().dependOnClassesThat().resideInAnyPackage(IMPL_SERVICE, IMPL_PROTOCOL, IMPL_CLIENT, IMPL_JOURNAL)
        .check(CLASSES);
  }

  @Test
  void theServiceAndItsParts_useNoneOfTheKafkaIntegration() {
    noClasses().that().resideInAnyPackage(ROOT, ROOT + ".impl..", TOOLS, WINDOW)
        .should().dependOnClassesThat().resideInAnyPackage(KAFKA, KAFKA_IMPL)
        .check(CLASSES);
  }

  @Test
  void inbox_usesNeitherTheKafkaIntegrationNorTheServicesImplementation() {
    noClasses().that().resideInAnyPackage(INBOX, INBOX_IMPL)
        .should().dependOnClassesThat().resideInAnyPackage(KAFKA, KAFKA_IMPL, IMPL_SERVICE, IMPL_PROTOCOL,
            IMPL_CLIENT, IMPL_JOURNAL)
        .check(CLASSES);
  }

  @Test
  void inboxImpl_isUsedOnlyByTheInboxApi_andTheServiceKnowsNoInbox() {
    noClasses().that().resideOutsideOfPackages(INBOX, INBOX_IMPL)
        .should().dependOnClassesThat().resideInAPackage(INBOX_IMPL)
        .check(CLASSES);
    noClasses().that().resideInAnyPackage(ROOT, ROOT + ".impl..", TOOLS, WINDOW)
        .should().dependOnClassesThat().resideInAnyPackage(INBOX, INBOX_IMPL)
        .check(CLASSES);
  }

  @Test
  void client_knowsTheContractNotTheServiceBehindIt() {
    noClasses().that().resideInAPackage(IMPL_CLIENT)
        .should().dependOnClassesThat().resideInAnyPackage(IMPL_SERVICE, IMPL_JOURNAL, JOURNAL, JOURNAL_INTERNAL)
        .check(CLASSES);
  }

  @Test
  void protocol_usesNoOtherImplementationPackage() {
    noClasses().that().resideInAPackage(IMPL_PROTOCOL)
        .should().dependOnClassesThat().resideInAnyPackage(IMPL_SERVICE, IMPL_CLIENT, IMPL_JOURNAL)
        .check(CLASSES);
  }

  @Test
  void journalAdapter_usesNeitherTheServiceApiNorAnotherImplementationPackage() {
    noClasses().that().resideInAPackage(IMPL_JOURNAL)
        .should().dependOnClassesThat().resideInAnyPackage(ROOT, IMPL_SERVICE, IMPL_PROTOCOL, IMPL_CLIENT,
            IMPL_OPTIONS)
        .check(CLASSES);
  }

  @Test
  void service_usesNotTheClient() {
    noClasses().that().resideInAPackage(IMPL_SERVICE)
        .should().dependOnClassesThat().resideInAPackage(IMPL_CLIENT)
        .check(CLASSES);
  }

  @Test
  void options_useOnlyTheirSchemaAndTheExactIntegerRule() {
    noClasses().that().resideInAPackage(IMPL_OPTIONS)
        .should().dependOnClassesThat().resideInAnyPackage(IMPL_SERVICE, IMPL_CLIENT, IMPL_JOURNAL, JOURNAL,
            JOURNAL_INTERNAL, KAFKA, KAFKA_IMPL)
        .check(CLASSES);
  }

  @Test
  void tools_readJournalsWithoutVertxOrTheServicesImplementation() {
    noClasses().that().resideInAPackage(TOOLS)
        .should().dependOnClassesThat().resideInAnyPackage("io.vertx..", ROOT + ".impl..")
        .check(CLASSES);
  }
}
