package dev.sluice.runner;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;

/**
 * How the runner authenticates to Kafka and trusts its brokers: the project's {@code
 * kafka.security.runner} principal, resolved by sluice and copied into the stopped container
 * before its first start (never an environment variable, a label or the mounted plan: see
 * docs/trust.md, "Kafka credentials"). The file is canonical JSON:
 *
 * <pre>{"format":"sluice.runner-kafka-client","version":1,"protocol":"SASL_SSL",
 *  "sasl":{"mechanism":"SCRAM-SHA-512","username":"u","password":"…"} | null,
 *  "tls":{"ca_pem":"…"|null,"cert_pem":"…"|null,"key_pem":"…"|null,"hostname_verification":true} | null}</pre>
 *
 * <p>No file is PLAINTEXT (a project without {@code kafka.security}). The same settings go to
 * every client the runner makes: the identity gate's and the close's Admin client, and Kafka
 * Streams' consumers and producers (the output and the dead-letter producer alike). PEM material
 * is handed to Kafka as config values ({@code ssl.truststore.type=PEM}), never written to a
 * file; Kafka logs every such value and the JAAS line as {@code [hidden]}. Nothing of the file
 * is ever printed: an invalid file is named by its path and the field at fault only.
 */
public record KafkaClientSecurity(String protocol, String mechanism, String username, Map<String, Object> props) {

  /** Where sluice copies the file (SLUICE_KAFKA_CLIENT_PATH overrides it, for tests). */
  public static final Path DEFAULT_PATH = Path.of("/etc/sluice/kafka-client.json");

  /** No security: no file. */
  public static final KafkaClientSecurity PLAINTEXT = new KafkaClientSecurity("PLAINTEXT", null, null, Map.of());

  private static final Set<String> PROTOCOLS = Set.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
  private static final Map<String, String> LOGIN_MODULES = Map.of(
      "SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule",
      "SCRAM-SHA-256", "org.apache.kafka.common.security.scram.ScramLoginModule",
      "PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule");

  /** Reads the file at {@code path}; an absent file is {@link #PLAINTEXT}. */
  public static KafkaClientSecurity load(Path path) throws RunnerExit {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      return PLAINTEXT;
    } catch (IOException e) {
      throw new RunnerExit("KAFKA_CLIENT_UNREADABLE", "cannot read " + path + ": " + e.getClass().getSimpleName());
    }
    return fromBytes(bytes, path.toString());
  }

  /** Validates the file's bytes ({@code where} names it in messages, never its content). */
  public static KafkaClientSecurity fromBytes(byte[] bytes, String where) throws RunnerExit {
    Object value;
    try {
      value = Json.parse(bytes).value();
    } catch (Json.SyntaxError e) {
      // the syntax error's text is an offset only, never the content
      throw invalid(where, "is not JSON (" + e.getMessage() + ")");
    }
    if (!(value instanceof Map<?, ?> file)) throw invalid(where, "is not a JSON object");
    if (!"sluice.runner-kafka-client".equals(file.get("format")) || !isOne(file.get("version"))) {
      throw invalid(where, "has an unknown format or version (expected sluice.runner-kafka-client version 1)");
    }
    exactKeys(file, where, "", "format", "version", "protocol", "sasl", "tls");
    Object p = file.get("protocol");
    if (!(p instanceof String protocol) || !PROTOCOLS.contains(protocol)) {
      throw invalid(where, "protocol must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL");
    }
    boolean sasl = protocol.startsWith("SASL_");
    boolean tls = protocol.equals("SSL") || protocol.equals("SASL_SSL");
    Map<String, Object> props = new LinkedHashMap<>();
    props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
    String mechanism = null;
    String username = null;
    Object s = file.get("sasl");
    if (sasl != (s instanceof Map)) {
      throw invalid(where, sasl ? "sasl must be an object under " + protocol : "sasl must be null under " + protocol);
    }
    if (s instanceof Map<?, ?> login) {
      exactKeys(login, where, "sasl.", "mechanism", "username", "password");
      mechanism = string(login, "mechanism", where, "sasl.");
      username = string(login, "username", where, "sasl.");
      String password = string(login, "password", where, "sasl.");
      String module = LOGIN_MODULES.get(mechanism);
      if (module == null) throw invalid(where, "sasl.mechanism must be one of SCRAM-SHA-512, SCRAM-SHA-256, PLAIN");
      props.put(SaslConfigs.SASL_MECHANISM, mechanism);
      props.put(SaslConfigs.SASL_JAAS_CONFIG,
          module + " required username=" + jaasQuoted(username) + " password=" + jaasQuoted(password) + ";");
    }
    Object t = file.get("tls");
    if (tls != (t instanceof Map)) {
      throw invalid(where, tls ? "tls must be an object under " + protocol : "tls must be null under " + protocol);
    }
    if (t instanceof Map<?, ?> trust) {
      exactKeys(trust, where, "tls.", "ca_pem", "cert_pem", "key_pem", "hostname_verification");
      String ca = nullableString(trust, "ca_pem", where);
      String cert = nullableString(trust, "cert_pem", where);
      String key = nullableString(trust, "key_pem", where);
      if (!(trust.get("hostname_verification") instanceof Boolean verify)) {
        throw invalid(where, "tls.hostname_verification must be true or false");
      }
      if ((cert == null) != (key == null)) throw invalid(where, "tls.cert_pem and tls.key_pem go together");
      if (protocol.equals("SSL") && cert == null) {
        throw invalid(where, "SSL authenticates with a client certificate: tls.cert_pem and tls.key_pem are required");
      }
      if (ca != null) {
        props.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        props.put(SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG, ca);
      }
      if (cert != null) {
        props.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
        props.put(SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG, cert);
        props.put(SslConfigs.SSL_KEYSTORE_KEY_CONFIG, key);
      }
      // Kafka's own default is "https"; an empty value turns the check off
      props.put(SslConfigs.SSL_ENDPOINT_IDENTIFICATION_ALGORITHM_CONFIG, verify ? "https" : "");
    }
    return new KafkaClientSecurity(protocol, mechanism, username, Map.copyOf(props));
  }

  /** Adds the settings to a client's configuration (Admin, Streams: every client it makes). */
  public Properties applyTo(Properties p) {
    p.putAll(props);
    return p;
  }

  /** What the runner may say about its connection: protocol, mechanism and principal, no secret. */
  public String describe() {
    return protocol + (mechanism == null ? "" : " " + mechanism + " as " + username);
  }

  @Override
  public String toString() {
    return "KafkaClientSecurity[" + describe() + "]";
  }

  /** A JAAS option value: double-quoted, backslash and quote escaped (Kafka's JaasConfig tokenizer). */
  static String jaasQuoted(String value) {
    return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  private static boolean isOne(Object v) {
    return v instanceof Json.Num n && n.raw().equals("1");
  }

  private static void exactKeys(Map<?, ?> m, String where, String prefix, String... keys) throws RunnerExit {
    Set<String> want = Set.of(keys);
    for (Object k : m.keySet()) {
      if (!want.contains(k)) throw invalid(where, "has a field the format does not define: " + prefix + k);
    }
    for (String k : keys) {
      if (!m.containsKey(k)) throw invalid(where, "misses the field " + prefix + k);
    }
  }

  private static String string(Map<?, ?> m, String key, String where, String prefix) throws RunnerExit {
    if (!(m.get(key) instanceof String v) || v.isEmpty()) {
      throw invalid(where, prefix + key + " must be a non-empty string");
    }
    return v;
  }

  private static String nullableString(Map<?, ?> m, String key, String where) throws RunnerExit {
    Object v = m.get(key);
    if (v == Json.NULL || v == null) return null;
    if (!(v instanceof String text) || text.isEmpty()) {
      throw invalid(where, "tls." + key + " must be a non-empty string or null");
    }
    return text;
  }

  private static RunnerExit invalid(String where, String what) {
    return new RunnerExit("KAFKA_CLIENT_INVALID", "the Kafka client file " + where + " " + what);
  }
}
