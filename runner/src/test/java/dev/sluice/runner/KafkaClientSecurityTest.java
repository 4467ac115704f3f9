package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Kafka client file sluice copies into a runner: read, validated, and given to every client. */
class KafkaClientSecurityTest {
  @TempDir Path tmp;

  static final String PASSWORD = "pa\"ss\\wörd-planted-7f3a";
  static final String CA = "-----BEGIN CERTIFICATE-----\nMIIBca\n-----END CERTIFICATE-----\n";

  static String file(String protocol, String sasl, String tls) {
    return "{\"format\":\"sluice.runner-kafka-client\",\"protocol\":\"" + protocol + "\",\"sasl\":" + sasl
        + ",\"tls\":" + tls + ",\"version\":1}";
  }

  static String scram(String password) {
    StringBuilder quoted = new StringBuilder();
    Json.writeString(quoted, password);
    return "{\"mechanism\":\"SCRAM-SHA-512\",\"password\":" + quoted + ",\"username\":\"orders-runner\"}";
  }

  static String tls(String ca, boolean verify) {
    StringBuilder b = new StringBuilder("{\"ca_pem\":");
    if (ca == null) b.append("null"); else Json.writeString(b, ca);
    return b.append(",\"cert_pem\":null,\"hostname_verification\":").append(verify).append(",\"key_pem\":null}").toString();
  }

  static KafkaClientSecurity read(String text) throws RunnerExit {
    return KafkaClientSecurity.fromBytes(text.getBytes(StandardCharsets.UTF_8), "/etc/sluice/kafka-client.json");
  }

  @Test
  void noFileIsPlaintextAndChangesNoSetting() throws Exception {
    KafkaClientSecurity s = KafkaClientSecurity.load(tmp.resolve("absent.json"));
    assertSame(KafkaClientSecurity.PLAINTEXT, s);
    Plan plan = TestPlans.valid(TestPlans.STARTER);
    assertEquals(Main.adminProps(plan), Main.adminProps(plan, s));
    assertFalse(Main.streamsProps(plan, tmp, "internal", null, s).containsKey("security.protocol"));
  }

  @Test
  void saslSslReachesTheAdminClientAndEveryStreamsClient() throws Exception {
    Path path = tmp.resolve("kafka-client.json");
    Files.writeString(path, file("SASL_SSL", scram(PASSWORD), tls(CA, true)));
    KafkaClientSecurity s = KafkaClientSecurity.load(path);
    assertEquals("SASL_SSL SCRAM-SHA-512 as orders-runner", s.describe());
    Plan plan = TestPlans.valid(TestPlans.STARTER);

    Properties admin = Main.adminProps(plan, s);
    assertEquals("SASL_SSL", admin.get("security.protocol"));
    assertEquals("SCRAM-SHA-512", admin.get("sasl.mechanism"));
    assertEquals("PEM", admin.get("ssl.truststore.type"));
    assertEquals(CA, admin.get("ssl.truststore.certificates"));
    assertEquals("https", admin.get("ssl.endpoint.identification.algorithm"));
    assertEquals("kafka:9092", admin.get("bootstrap.servers"));
    // Kafka's own parser accepts it, and reads the password back exactly (quotes and backslashes)
    String jaas = (String) admin.get("sasl.jaas.config");
    AppConfigurationEntry entry =
        JaasContext.loadClientContext(new AdminClientConfig(admin).values()).configurationEntries().get(0);
    assertEquals("org.apache.kafka.common.security.scram.ScramLoginModule", entry.getLoginModuleName());
    assertEquals(PASSWORD, entry.getOptions().get("password"));
    assertEquals("orders-runner", entry.getOptions().get("username"));

    // Streams hands its top-level settings to its consumers, its producers (the output and the
    // dead-letter records go through the same producer) and its admin client
    Properties streams = Main.streamsProps(plan, tmp, "internal", "c1", s);
    StreamsConfig config = new StreamsConfig(streams);
    for (Map<String, Object> client : java.util.List.of(
        config.getMainConsumerConfigs("g", "c", 0),
        config.getProducerConfigs("c"),
        config.getAdminConfigs("c"))) {
      assertEquals("SASL_SSL", client.get("security.protocol"));
      assertEquals(jaas, client.get("sasl.jaas.config"));
      assertEquals(CA, client.get("ssl.truststore.certificates"));
    }
    // nothing secret in what the runner may print
    assertFalse(s.toString().contains(PASSWORD));
    assertFalse(s.describe().contains(PASSWORD));
  }

  @Test
  void hostnameVerificationOffAndTheSystemTrust() throws Exception {
    KafkaClientSecurity s = read(file("SASL_SSL", scram("p"), tls(null, false)));
    assertEquals("", s.props().get("ssl.endpoint.identification.algorithm"));
    assertFalse(s.props().containsKey("ssl.truststore.type"));
    assertFalse(s.props().containsKey("ssl.truststore.certificates"));
  }

  @Test
  void mutualTlsUsesThePemKeystore() throws Exception {
    String tls = "{\"ca_pem\":null,\"cert_pem\":\"CERT\",\"hostname_verification\":true,\"key_pem\":\"KEY\"}";
    KafkaClientSecurity s = read(file("SSL", "null", tls));
    assertEquals("SSL", s.describe());
    assertEquals("PEM", s.props().get("ssl.keystore.type"));
    assertEquals("CERT", s.props().get("ssl.keystore.certificate.chain"));
    assertEquals("KEY", s.props().get("ssl.keystore.key"));
    assertFalse(s.props().containsKey("sasl.jaas.config"));
  }

  @Test
  void plainUsesThePlainLoginModule() throws Exception {
    String sasl = "{\"mechanism\":\"PLAIN\",\"password\":\"p\",\"username\":\"u\"}";
    KafkaClientSecurity s = read(file("SASL_PLAINTEXT", sasl, "null"));
    assertTrue(((String) s.props().get("sasl.jaas.config")).startsWith("org.apache.kafka.common.security.plain.PlainLoginModule required"));
  }

  @Test
  void anInvalidFileIsExit10AndNeverEchoesItsContent() {
    String[] bad = {
      "not json " + PASSWORD,
      "[]",
      file("SASL_SSL", scram(PASSWORD), tls(CA, true)).replace("\"version\":1", "\"version\":2"),
      file("KERBEROS", scram(PASSWORD), tls(CA, true)),
      file("SASL_SSL", "null", tls(CA, true)),
      file("SASL_SSL", scram(PASSWORD), "null"),
      file("PLAINTEXT", scram(PASSWORD), "null"),
      file("SASL_SSL", scram(PASSWORD).replace("SCRAM-SHA-512", "GSSAPI"), tls(CA, true)),
      file("SASL_SSL", scram(""), tls(CA, true)),
      file("SASL_SSL", scram(PASSWORD).replace("\"username\"", "\"user\""), tls(CA, true)),
      file("SSL", "null", tls(CA, true)),
      file("SASL_SSL", scram(PASSWORD), tls(CA, true).replace("true", "\"yes\"")),
      file("SASL_SSL", scram(PASSWORD), tls(CA, true).replace("\"cert_pem\":null", "\"cert_pem\":\"C\"")),
      file("SASL_SSL", scram(PASSWORD), tls(CA, true)).replace("{\"format\"", "{\"extra\":\"" + PASSWORD + "\",\"format\""),
    };
    for (String text : bad) {
      RunnerExit e = assertThrows(RunnerExit.class, () -> read(text), text);
      assertEquals("KAFKA_CLIENT_INVALID", e.reason, text);
      assertEquals(10, e.exitCode);
      assertFalse(e.toJsonLine().contains("planted"), e.toJsonLine());
    }
  }

  @Test
  void anUnreadableFileIsExit10() throws Exception {
    // a directory where the file should be: it exists and cannot be read as a file
    Path dir = Files.createDirectory(tmp.resolve("kafka-client.json"));
    RunnerExit e = assertThrows(RunnerExit.class, () -> KafkaClientSecurity.load(dir));
    assertEquals("KAFKA_CLIENT_UNREADABLE", e.reason);
    assertEquals(10, e.exitCode);
  }

  @Test
  void theClientPathDefaultsToEtcSluiceAndCanBeMoved() {
    assertEquals(Path.of("/etc/sluice/kafka-client.json"), Main.clientPath(Map.of()));
    assertEquals(Path.of("/tmp/k.json"), Main.clientPath(Map.of("SLUICE_KAFKA_CLIENT_PATH", "/tmp/k.json")));
  }

  @Test
  void refusedLoginsAndOperationsHaveTheirOwnReasons() {
    RunnerExit login = IdentityGate.failed("describeCluster",
        new SaslAuthenticationException("Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"));
    assertEquals("KAFKA_AUTHENTICATION_FAILED", login.reason);
    assertEquals(15, login.exitCode);
    RunnerExit topic = IdentityGate.failed("describeTopics raw_orders",
        new TopicAuthorizationException(java.util.Set.of("raw_orders")));
    assertEquals("KAFKA_AUTHORIZATION_FAILED", topic.reason);
    assertTrue(topic.detail.contains("raw_orders"), topic.detail);
    assertEquals("KAFKA_ADMIN_FAILED", IdentityGate.failed("x", new IllegalStateException("boom")).reason);
    // the same from inside Kafka Streams (a producer's transactional ID, the group)
    RunnerExit streams = Main.Run.classify(new StreamsException("task failed",
        new GroupAuthorizationException("Not authorized to access group: sluice-orders-eligible_orders")));
    assertEquals("KAFKA_AUTHORIZATION_FAILED", streams.reason);
    assertEquals(15, streams.exitCode);
  }
}
