package dev.sluice.runner;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds valid plans (canonical bytes with correct checksums) for tests. */
final class TestPlans {
  private TestPlans() {}

  static final String STARTER = "{\"kind\":\"and\",\"args\":["
      + "{\"kind\":\"compare\",\"op\":\">=\",\"left\":{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"BIGINT\"},"
      + "\"right\":{\"kind\":\"literal\",\"type\":\"BIGINT\",\"value\":\"100\"}},"
      + "{\"kind\":\"compare\",\"op\":\"=\",\"left\":{\"kind\":\"column\",\"name\":\"paid\",\"type\":\"BOOLEAN\"},"
      + "\"right\":{\"kind\":\"literal\",\"type\":\"BOOLEAN\",\"value\":true}}]}";

  static String artifactJson(String predicateJson) {
    return "{\"format\":\"sluice.runner-artifact\",\"version\":1,\"project\":\"orders\",\"environment\":null,"
        + "\"model\":\"eligible_orders\",\"application_id\":\"sluice-orders-eligible_orders\","
        + "\"input\":{\"topic\":\"raw_orders\"},\"output\":{\"topic\":\"eligible_orders\"},"
        + "\"schema\":[{\"name\":\"order_id\",\"type\":\"STRING\",\"nullable\":false},"
        + "{\"name\":\"amount\",\"type\":\"BIGINT\",\"nullable\":false},"
        + "{\"name\":\"paid\",\"type\":\"BOOLEAN\",\"nullable\":false},"
        + "{\"name\":\"score\",\"type\":\"DOUBLE\",\"nullable\":true},"
        + "{\"name\":\"note\",\"type\":\"STRING\",\"nullable\":true}],"
        + "\"projection\":[{\"source\":\"order_id\",\"name\":\"order_id\"},{\"source\":\"amount\",\"name\":\"amount\"},"
        + "{\"source\":\"score\",\"name\":\"s\"},{\"source\":\"note\",\"name\":\"note\"}],"
        + "\"predicate\":" + predicateJson + ","
        + "\"image\":\"sha256:" + "a".repeat(64) + "\",\"network\":\"sluice-net\",\"initial_offsets\":\"earliest\","
        + "\"ownership\":{\"managed_by\":\"sluice\",\"project\":\"orders\",\"environment\":null}}";
  }

  /** A plan object (insertion-ordered maps) around an artifact, with a correct artifact_sha256. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> planTree(String predicateJson) throws Exception {
    Object artifact = Json.parse(artifactJson(predicateJson)).value();
    Map<String, Object> plan = new LinkedHashMap<>();
    plan.put("format", "sluice.runner-plan");
    plan.put("version", new Json.Num("1"));
    plan.put("artifact", artifact);
    plan.put("artifact_sha256", Plan.sha256(Json.canonicalBytes(artifact)));
    plan.put("bootstrap_servers", "kafka:9092");
    Map<String, Object> identity = new LinkedHashMap<>();
    identity.put("cluster_id", "4L6g3nShT-eMCtK--X86sw");
    identity.put("input_topic_id", "AAAAAAAAAAAAAAAAAAAAAQ");
    identity.put("output_topic_id", "AAAAAAAAAAAAAAAAAAAAAg");
    plan.put("identity", identity);
    return plan;
  }

  /** The dead-letter topic ID {@link #deadLetterTree} binds. */
  static final String DEAD_LETTER_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAw";

  /** A valid plan whose artifact opts in to on_invalid: dead_letter with {@code topic}, its topic ID bound. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> deadLetterTree(String predicateJson, String topic) throws Exception {
    Map<String, Object> tree = planTree(predicateJson);
    Map<String, Object> artifact = (Map<String, Object>) tree.get("artifact");
    Map<String, Object> onInvalid = new LinkedHashMap<>();
    onInvalid.put("policy", "dead_letter");
    onInvalid.put("topic", topic);
    artifact.put("on_invalid", onInvalid);
    tree.put("artifact_sha256", Plan.sha256(Json.canonicalBytes(artifact)));
    ((Map<String, Object>) tree.get("identity")).put("dead_letter_topic_id", DEAD_LETTER_TOPIC_ID);
    return tree;
  }

  static byte[] bytes(Map<String, Object> tree) throws Exception {
    return Json.canonicalBytes(tree);
  }

  static Plan load(byte[] bytes) throws RunnerExit {
    return Plan.fromBytes(bytes, Plan.sha256(bytes));
  }

  static Plan valid(String predicateJson) throws Exception {
    return load(bytes(planTree(predicateJson)));
  }

  static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
