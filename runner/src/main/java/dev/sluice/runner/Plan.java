package dev.sluice.runner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The mounted runner plan (docs/artifact-format.md, "Mounted runner plan"), validated. Loading
 * never touches Kafka: a plan that fails here stops the runner with exit 10 or 11 before any
 * client exists.
 *
 * <p>Check order: unreadable file (10, PLAN_UNREADABLE) → sha256 of the bytes vs
 * {@code SLUICE_PLAN_SHA256} (11, PLAN_SHA256_MISMATCH; a missing variable is
 * PLAN_SHA256_MISSING) → JSON syntax (10, PLAN_MALFORMED) → canonical bytes (10,
 * PLAN_NOT_CANONICAL) → format/version (10, PLAN_UNKNOWN_FORMAT) → fields and types (10) →
 * artifact_sha256 (11, ARTIFACT_SHA256_MISMATCH).
 */
public record Plan(
    String sha256,
    String artifactSha256,
    String bootstrapServers,
    String clusterId,
    String inputTopicId,
    String outputTopicId,
    String project,
    String environment,
    String model,
    String applicationId,
    String inputTopic,
    String outputTopic,
    List<Field> schema,
    Projection projection,
    Predicate predicate,
    String image,
    String network,
    String initialOffsets,
    String deadLetterTopic,
    String deadLetterTopicId) {

  private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern IMAGE = Pattern.compile("sha256:[0-9a-f]{64}");
  private static final Pattern APP_ID = Pattern.compile("[A-Za-z0-9._-]{1,249}");
  private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");

  /** Reads and validates the plan file; {@code expectedSha256} is SLUICE_PLAN_SHA256. */
  public static Plan load(Path path, String expectedSha256) throws RunnerExit {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(path);
    } catch (IOException e) {
      throw new RunnerExit("PLAN_UNREADABLE", "cannot read " + path + ": " + e);
    }
    return fromBytes(bytes, expectedSha256);
  }

  /** Validates plan bytes; {@code expectedSha256} is SLUICE_PLAN_SHA256. */
  public static Plan fromBytes(byte[] bytes, String expectedSha256) throws RunnerExit {
    String sha = sha256(bytes);
    if (expectedSha256 == null || expectedSha256.isEmpty()) {
      throw new RunnerExit("PLAN_SHA256_MISSING", "SLUICE_PLAN_SHA256 is not set; the plan read has sha256 " + sha);
    }
    if (!sha.equals(expectedSha256)) {
      throw new RunnerExit("PLAN_SHA256_MISMATCH", "plan sha256 is " + sha + ", SLUICE_PLAN_SHA256 is " + expectedSha256);
    }
    Json.Parsed parsed;
    try {
      parsed = Json.parse(bytes);
    } catch (Json.SyntaxError e) {
      throw invalid("PLAN_MALFORMED", "plan is not JSON: " + e.getMessage());
    }
    if (parsed.duplicateKey() != null) {
      throw invalid("PLAN_NOT_CANONICAL", "key '" + parsed.duplicateKey() + "' appears twice");
    }
    try {
      if (!java.util.Arrays.equals(Json.canonicalBytes(parsed.value()), bytes)) {
        throw invalid("PLAN_NOT_CANONICAL", "plan bytes are not canonical JSON (sorted keys, no whitespace, no trailing newline)");
      }
    } catch (Json.NotCanonical e) {
      throw invalid("PLAN_NOT_CANONICAL", e.getMessage());
    }
    Map<?, ?> plan = object(parsed.value(), "plan");
    if (!"sluice.runner-plan".equals(plan.get("format")) || !isOne(plan.get("version"))) {
      throw invalid("PLAN_UNKNOWN_FORMAT", "expected format sluice.runner-plan version 1, got " + plan.get("format") + " version " + plan.get("version"));
    }
    exactFields(plan, "plan", "format", "version", "artifact", "artifact_sha256", "bootstrap_servers", "identity");
    Map<?, ?> artifact = object(plan.get("artifact"), "artifact");
    String artifactSha = matching(plan, "artifact_sha256", "plan", SHA256);
    String bootstrap = nonEmpty(plan, "bootstrap_servers", "plan");
    Map<?, ?> identity = object(plan.get("identity"), "identity");
    // dead_letter_topic_id is bound exactly when the artifact opts in to on_invalid: dead_letter
    // (checked below, once the artifact is read)
    exactFields(identity, "identity", Set.of("dead_letter_topic_id"), "cluster_id", "input_topic_id", "output_topic_id");
    String clusterId = nonEmpty(identity, "cluster_id", "identity");
    String inputTopicId = nonEmpty(identity, "input_topic_id", "identity");
    String outputTopicId = nonEmpty(identity, "output_topic_id", "identity");

    if (!"sluice.runner-artifact".equals(artifact.get("format")) || !isOne(artifact.get("version"))) {
      throw invalid("PLAN_UNKNOWN_FORMAT", "expected artifact format sluice.runner-artifact version 1, got " + artifact.get("format") + " version " + artifact.get("version"));
    }
    // on_invalid is the one optional field: absent means "stop", so that artifacts of models
    // that do not opt in keep their bytes and checksums (docs/artifact-format.md)
    exactFields(artifact, "artifact", Set.of("on_invalid"), "format", "version", "project", "environment", "model",
        "application_id", "input", "output", "schema", "projection", "predicate", "image", "network",
        "initial_offsets", "ownership");
    String project = nonEmpty(artifact, "project", "artifact");
    String environment = nullableString(artifact, "environment", "artifact");
    String model = nonEmpty(artifact, "model", "artifact");
    String appId = matching(artifact, "application_id", "artifact", APP_ID);
    Map<?, ?> input = object(artifact.get("input"), "artifact.input");
    exactFields(input, "artifact.input", "topic");
    String inputTopic = matching(input, "topic", "artifact.input", TOPIC);
    Map<?, ?> output = object(artifact.get("output"), "artifact.output");
    exactFields(output, "artifact.output", "topic");
    String outputTopic = matching(output, "topic", "artifact.output", TOPIC);
    if (inputTopic.equals(outputTopic)) throw invalid("PLAN_INVALID", "input and output topic are the same: " + inputTopic);
    String deadLetterTopic = null;
    if (artifact.containsKey("on_invalid")) {
      Map<?, ?> onInvalid = object(artifact.get("on_invalid"), "artifact.on_invalid");
      exactFields(onInvalid, "artifact.on_invalid", "policy", "topic");
      if (!"dead_letter".equals(onInvalid.get("policy"))) {
        throw invalid("PLAN_INVALID", "artifact.on_invalid.policy must be dead_letter (stop is written by leaving on_invalid out)");
      }
      deadLetterTopic = matching(onInvalid, "topic", "artifact.on_invalid", TOPIC);
      if (deadLetterTopic.equals(inputTopic) || deadLetterTopic.equals(outputTopic)) {
        throw invalid("PLAN_INVALID", "the dead-letter topic must differ from the input and output topics: " + deadLetterTopic);
      }
    }
    String deadLetterTopicId = null;
    if (deadLetterTopic != null) {
      if (!identity.containsKey("dead_letter_topic_id")) {
        throw invalid("PLAN_MISSING_FIELD", "identity.dead_letter_topic_id is missing (the artifact has on_invalid: dead_letter)");
      }
      deadLetterTopicId = nonEmpty(identity, "dead_letter_topic_id", "identity");
    } else if (identity.containsKey("dead_letter_topic_id")) {
      throw invalid("PLAN_UNKNOWN_FIELD", "identity.dead_letter_topic_id is bound only with artifact.on_invalid");
    }

    List<Field> schema = schema(artifact.get("schema"));
    Projection projection = projection(artifact.get("projection"), schema);
    Predicate predicate;
    if (artifact.get("predicate") == Json.NULL) {
      predicate = Predicate.alwaysTrue();
    } else {
      try {
        predicate = Predicate.compile(artifact.get("predicate"), schema);
      } catch (Predicate.InvalidAst e) {
        throw invalid(e.reason, "artifact." + e.getMessage());
      }
    }
    String image = matching(artifact, "image", "artifact", IMAGE);
    String network = nonEmpty(artifact, "network", "artifact");
    String initialOffsets = nonEmpty(artifact, "initial_offsets", "artifact");
    if (!initialOffsets.equals("earliest") && !initialOffsets.equals("latest")) {
      throw invalid("PLAN_INVALID", "artifact.initial_offsets must be earliest or latest, got " + initialOffsets);
    }
    Map<?, ?> ownership = object(artifact.get("ownership"), "artifact.ownership");
    exactFields(ownership, "artifact.ownership", "managed_by", "project", "environment");
    if (!"sluice".equals(ownership.get("managed_by"))) throw invalid("PLAN_INVALID", "artifact.ownership.managed_by must be sluice");
    nonEmpty(ownership, "project", "artifact.ownership");
    nullableString(ownership, "environment", "artifact.ownership");

    String computed;
    try {
      computed = sha256(Json.canonicalBytes(artifact));
    } catch (Json.NotCanonical e) {
      throw invalid("PLAN_NOT_CANONICAL", e.getMessage());
    }
    if (!computed.equals(artifactSha)) {
      throw new RunnerExit("ARTIFACT_SHA256_MISMATCH", "artifact sha256 is " + computed + ", the plan says " + artifactSha);
    }
    return new Plan(sha, artifactSha, bootstrap, clusterId, inputTopicId, outputTopicId, project, environment, model,
        appId, inputTopic, outputTopic, schema, projection, predicate, image, network, initialOffsets, deadLetterTopic,
        deadLetterTopicId);
  }

  private static List<Field> schema(Object v) throws RunnerExit {
    if (!(v instanceof List<?> list)) throw invalid("PLAN_WRONG_TYPE", "artifact.schema must be an array");
    if (list.isEmpty()) throw invalid("PLAN_INVALID", "artifact.schema is empty");
    List<Field> fields = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < list.size(); i++) {
      String p = "artifact.schema[" + i + "]";
      Map<?, ?> f = object(list.get(i), p);
      exactFields(f, p, "name", "type", "nullable");
      String name = nonEmpty(f, "name", p);
      if (!names.add(name)) throw invalid("PLAN_INVALID", p + ": field '" + name + "' declared twice");
      if (!(f.get("type") instanceof String tn)) throw invalid("PLAN_WRONG_TYPE", p + ".type must be a string");
      SqlType t = SqlType.byName(tn, false);
      if (t == null) throw invalid("PLAN_INVALID", p + ": unknown type '" + tn + "'");
      if (!(f.get("nullable") instanceof Boolean nullable)) throw invalid("PLAN_WRONG_TYPE", p + ".nullable must be a boolean");
      fields.add(new Field(name, t, nullable));
    }
    return fields;
  }

  private static Projection projection(Object v, List<Field> schema) throws RunnerExit {
    if (!(v instanceof List<?> list)) throw invalid("PLAN_WRONG_TYPE", "artifact.projection must be an array");
    if (list.isEmpty()) throw invalid("PLAN_INVALID", "artifact.projection is empty");
    List<Projection.Column> cols = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < list.size(); i++) {
      String p = "artifact.projection[" + i + "]";
      Map<?, ?> c = object(list.get(i), p);
      exactFields(c, p, "source", "name");
      String source = nonEmpty(c, "source", p);
      String name = nonEmpty(c, "name", p);
      if (!names.add(name)) throw invalid("PLAN_INVALID", p + ": output column '" + name + "' appears twice");
      int idx = -1;
      for (int k = 0; k < schema.size(); k++) if (schema.get(k).name().equals(source)) idx = k;
      if (idx < 0) throw invalid("PLAN_INVALID", p + ": source '" + source + "' is not in the schema");
      cols.add(new Projection.Column(idx, name));
    }
    return new Projection(cols);
  }

  // --------------------------------------------------------------------------------------------

  private static RunnerExit invalid(String reason, String detail) {
    return new RunnerExit(reason, detail);
  }

  private static boolean isOne(Object v) {
    return v instanceof Json.Num n && n.raw().equals("1");
  }

  private static Map<?, ?> object(Object v, String path) throws RunnerExit {
    if (!(v instanceof Map<?, ?> m)) throw invalid("PLAN_WRONG_TYPE", path + " must be an object");
    return m;
  }

  private static void exactFields(Map<?, ?> m, String path, String... names) throws RunnerExit {
    exactFields(m, path, Set.of(), names);
  }

  /** Every name must be present; {@code optional} names may be; nothing else may. */
  private static void exactFields(Map<?, ?> m, String path, Set<String> optional, String... names) throws RunnerExit {
    Set<String> allowed = Set.of(names);
    for (Object k : m.keySet()) {
      if (!allowed.contains(k) && !optional.contains(k)) {
        throw invalid("PLAN_UNKNOWN_FIELD", path + "." + k + " is not a known field");
      }
    }
    for (String n : names) {
      if (!m.containsKey(n)) throw invalid("PLAN_MISSING_FIELD", path + "." + n + " is missing");
    }
  }

  private static String nonEmpty(Map<?, ?> m, String key, String path) throws RunnerExit {
    if (!(m.get(key) instanceof String s)) throw invalid("PLAN_WRONG_TYPE", path + "." + key + " must be a string");
    if (s.isEmpty()) throw invalid("PLAN_INVALID", path + "." + key + " is empty");
    return s;
  }

  private static String nullableString(Map<?, ?> m, String key, String path) throws RunnerExit {
    Object v = m.get(key);
    if (v == Json.NULL) return null;
    if (!(v instanceof String s) || s.isEmpty()) throw invalid("PLAN_WRONG_TYPE", path + "." + key + " must be a non-empty string or null");
    return s;
  }

  private static String matching(Map<?, ?> m, String key, String path, Pattern p) throws RunnerExit {
    String s = nonEmpty(m, key, path);
    if (!p.matcher(s).matches()) throw invalid("PLAN_INVALID", path + "." + key + " '" + s + "' does not match " + p);
    return s;
  }

  /** Lower-case hex sha256. */
  public static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Lower-case hex sha256 of a UTF-8 string. */
  public static String sha256(String s) {
    return sha256(s.getBytes(StandardCharsets.UTF_8));
  }
}
