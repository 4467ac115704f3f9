package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Strict plan loading: every rejection has its exit code and stable reason. */
class PlanTest {
  @TempDir Path tmp;

  static RunnerExit reject(byte[] bytes) {
    return assertThrows(RunnerExit.class, () -> TestPlans.load(bytes));
  }

  static RunnerExit rejectTree(Map<String, Object> tree) throws Exception {
    return reject(TestPlans.bytes(tree));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> artifactOf(Map<String, Object> tree) {
    return (Map<String, Object>) tree.get("artifact");
  }

  /** Recomputes artifact_sha256 so that only the intended fault remains. */
  static void reseal(Map<String, Object> tree) throws Exception {
    tree.put("artifact_sha256", Plan.sha256(Json.canonicalBytes(tree.get("artifact"))));
  }

  @Test
  void aValidPlanLoadsWithEveryField() throws Exception {
    byte[] bytes = TestPlans.bytes(TestPlans.planTree(TestPlans.STARTER));
    Path f = tmp.resolve("plan.json");
    Files.write(f, bytes);
    Plan p = Plan.load(f, Plan.sha256(bytes));
    assertEquals(Plan.sha256(bytes), p.sha256());
    assertEquals("sluice-orders-eligible_orders", p.applicationId());
    assertEquals("raw_orders", p.inputTopic());
    assertEquals("eligible_orders", p.outputTopic());
    assertEquals("4L6g3nShT-eMCtK--X86sw", p.clusterId());
    assertEquals("AAAAAAAAAAAAAAAAAAAAAQ", p.inputTopicId());
    assertEquals(5, p.schema().size());
    assertEquals("earliest", p.initialOffsets());
  }

  @Test
  void anUnreadableFileIsExit10() {
    RunnerExit e = assertThrows(RunnerExit.class, () -> Plan.load(tmp.resolve("absent.json"), "x"));
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_UNREADABLE", e.reason);
  }

  @Test
  void aChecksumMismatchIsExit11() throws Exception {
    byte[] bytes = TestPlans.bytes(TestPlans.planTree(TestPlans.STARTER));
    RunnerExit e = assertThrows(RunnerExit.class, () -> Plan.fromBytes(bytes, "0".repeat(64)));
    assertEquals(11, e.exitCode);
    assertEquals("PLAN_SHA256_MISMATCH", e.reason);
  }

  @Test
  void aMissingChecksumVariableIsExit11() throws Exception {
    byte[] bytes = TestPlans.bytes(TestPlans.planTree(TestPlans.STARTER));
    RunnerExit e = assertThrows(RunnerExit.class, () -> Plan.fromBytes(bytes, null));
    assertEquals(11, e.exitCode);
    assertEquals("PLAN_SHA256_MISSING", e.reason);
  }

  @Test
  void theChecksumIsCheckedBeforeTheContent() {
    RunnerExit e = assertThrows(RunnerExit.class, () -> Plan.fromBytes("garbage".getBytes(StandardCharsets.UTF_8), "0".repeat(64)));
    assertEquals(11, e.exitCode);
  }

  @Test
  void anArtifactChecksumMismatchIsExit11() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    tree.put("artifact_sha256", "b".repeat(64));
    RunnerExit e = rejectTree(tree);
    assertEquals(11, e.exitCode);
    assertEquals("ARTIFACT_SHA256_MISMATCH", e.reason);
  }

  @Test
  void aChangedArtifactWithTheOldChecksumIsExit11() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    artifactOf(tree).put("model", "other");
    RunnerExit e = rejectTree(tree);
    assertEquals(11, e.exitCode);
    assertEquals("ARTIFACT_SHA256_MISMATCH", e.reason);
  }

  @Test
  void anUnknownPlanFieldIsExit10() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    tree.put("extra", "x");
    RunnerExit e = rejectTree(tree);
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_UNKNOWN_FIELD", e.reason);
  }

  @Test
  void anUnknownArtifactFieldIsExit10() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    artifactOf(tree).put("replicas", new Json.Num("2"));
    reseal(tree);
    RunnerExit e = rejectTree(tree);
    assertEquals("PLAN_UNKNOWN_FIELD", e.reason);
  }

  @Test
  void anUnknownPredicateFieldIsExit10() throws Exception {
    Map<String, Object> tree = TestPlans.planTree("{\"kind\":\"is_null\",\"arg\":{\"kind\":\"column\",\"name\":\"note\",\"type\":\"STRING\"},\"negated\":false,\"x\":1}");
    RunnerExit e = rejectTree(tree);
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_UNKNOWN_FIELD", e.reason);
  }

  @Test
  void aMissingFieldIsExit10() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    tree.remove("identity");
    RunnerExit e = rejectTree(tree);
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_MISSING_FIELD", e.reason);
  }

  @Test
  void aWrongTypeIsExit10() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    tree.put("bootstrap_servers", new Json.Num("9092"));
    RunnerExit e = rejectTree(tree);
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_WRONG_TYPE", e.reason);
  }

  @Test
  void anUnknownFormatOrVersionIsExit10() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    tree.put("version", new Json.Num("2"));
    assertEquals("PLAN_UNKNOWN_FORMAT", rejectTree(tree).reason);
    tree.put("version", new Json.Num("1"));
    tree.put("format", "sluice.other");
    assertEquals("PLAN_UNKNOWN_FORMAT", rejectTree(tree).reason);
  }

  @Test
  void nonCanonicalBytesAreExit10() throws Exception {
    String canonical = TestPlans.utf8(TestPlans.bytes(TestPlans.planTree(TestPlans.STARTER)));
    for (String variant : new String[] {
        canonical + "\n", // trailing newline
        " " + canonical, // leading whitespace
        canonical.replaceFirst(",", ", "), // insignificant whitespace
        canonical.replace("\"version\":1", "\"version\":1.0"), // not an integer
        "{\"format\":\"sluice.runner-plan\"," + canonical.substring(1), // duplicate key
        "\uFEFF" + canonical, // BOM
    }) {
      RunnerExit e = reject(variant.getBytes(StandardCharsets.UTF_8));
      assertEquals(10, e.exitCode, variant);
      assertTrue(e.reason.equals("PLAN_NOT_CANONICAL") || e.reason.equals("PLAN_MALFORMED"), e.reason);
    }
  }

  @Test
  void unsortedKeysAreNotCanonical() throws Exception {
    String canonical = TestPlans.utf8(TestPlans.bytes(TestPlans.planTree(TestPlans.STARTER)));
    // move "version":1 to the front
    String unsorted = "{\"version\":1," + canonical.substring(1).replace(",\"version\":1", "");
    RunnerExit e = reject(unsorted.getBytes(StandardCharsets.UTF_8));
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_NOT_CANONICAL", e.reason);
  }

  @Test
  void notJsonIsExit10Malformed() {
    RunnerExit e = reject("{\"format\":".getBytes(StandardCharsets.UTF_8));
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_MALFORMED", e.reason);
  }

  @Test
  void predicateTypeErrorsAreExit10() throws Exception {
    String[] bad = {
        // BIGINT compared with DOUBLE: no implicit coercion
        "{\"kind\":\"compare\",\"op\":\"=\",\"left\":{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"BIGINT\"},\"right\":{\"kind\":\"literal\",\"type\":\"DOUBLE\",\"value\":\"1.5\"}}",
        // column type differs from the schema
        "{\"kind\":\"is_null\",\"arg\":{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"STRING\"},\"negated\":false}",
        // unknown column
        "{\"kind\":\"is_null\",\"arg\":{\"kind\":\"column\",\"name\":\"nope\",\"type\":\"STRING\"},\"negated\":false}",
        // a non-boolean predicate
        "{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"BIGINT\"}",
        // AND with one argument
        "{\"kind\":\"and\",\"args\":[{\"kind\":\"literal\",\"type\":\"BOOLEAN\",\"value\":true}]}",
        // unknown operator
        "{\"kind\":\"compare\",\"op\":\"==\",\"left\":{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"BIGINT\"},\"right\":{\"kind\":\"literal\",\"type\":\"BIGINT\",\"value\":\"1\"}}",
        // BIGINT literal as a JSON number
        "{\"kind\":\"compare\",\"op\":\"=\",\"left\":{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"BIGINT\"},\"right\":{\"kind\":\"literal\",\"type\":\"BIGINT\",\"value\":1}}",
        // BIGINT literal out of range
        "{\"kind\":\"compare\",\"op\":\"=\",\"left\":{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"BIGINT\"},\"right\":{\"kind\":\"literal\",\"type\":\"BIGINT\",\"value\":\"9223372036854775808\"}}",
        // DOUBLE literal not in shortest form
        "{\"kind\":\"compare\",\"op\":\"=\",\"left\":{\"kind\":\"column\",\"name\":\"score\",\"type\":\"DOUBLE\"},\"right\":{\"kind\":\"literal\",\"type\":\"DOUBLE\",\"value\":\"0.50\"}}",
        // IN list with a column
        "{\"kind\":\"in\",\"arg\":{\"kind\":\"column\",\"name\":\"note\",\"type\":\"STRING\"},\"list\":[{\"kind\":\"column\",\"name\":\"order_id\",\"type\":\"STRING\"}],\"negated\":false}",
        // unknown kind
        "{\"kind\":\"like\",\"arg\":{\"kind\":\"column\",\"name\":\"note\",\"type\":\"STRING\"}}",
    };
    for (String ast : bad) {
      RunnerExit e = rejectTree(TestPlans.planTree(ast));
      assertEquals(10, e.exitCode, ast);
      assertTrue(e.reason.startsWith("PLAN_"), e.reason);
    }
  }

  @Test
  void projectionOfAnUnknownSourceIsExit10() throws Exception {
    Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
    artifactOf(tree).put("projection", Json.parse("[{\"source\":\"nope\",\"name\":\"x\"}]").value());
    reseal(tree);
    RunnerExit e = rejectTree(tree);
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_INVALID", e.reason);
  }

  @Test
  void theExitLineIsOneCanonicalJsonObject() {
    RunnerExit e = new RunnerExit("IDENTITY_TOPIC_MISMATCH", "input topic \"x\"");
    assertEquals("{\"context\":{},\"detail\":\"input topic \\\"x\\\"\",\"reason\":\"IDENTITY_TOPIC_MISMATCH\",\"sluice_runner_exit\":12}", e.toJsonLine());
  }

  @Test
  void onInvalidDeadLetterNamesTheDeadLetterTopicAndItsAbsenceMeansStop() throws Exception {
    assertEquals(null, TestPlans.valid(TestPlans.STARTER).deadLetterTopic());
    Plan p = TestPlans.load(TestPlans.bytes(TestPlans.deadLetterTree(TestPlans.STARTER, "orders_dlq")));
    assertEquals("orders_dlq", p.deadLetterTopic());
    assertEquals(TestPlans.DEAD_LETTER_TOPIC_ID, p.deadLetterTopicId());
    assertEquals(null, TestPlans.valid(TestPlans.STARTER).deadLetterTopicId());
  }

  @Test
  void theDeadLetterTopicIdIsBoundExactlyWhenTheArtifactOptsIn() throws Exception {
    // on_invalid without the ID: the gate could not tell a recreated dead-letter topic
    Map<String, Object> missing = TestPlans.deadLetterTree(TestPlans.STARTER, "orders_dlq");
    identityOf(missing).remove("dead_letter_topic_id");
    RunnerExit e = rejectTree(missing);
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_MISSING_FIELD", e.reason, e.detail);
    assertTrue(e.detail.contains("identity.dead_letter_topic_id"), e.detail);
    // the ID without on_invalid: a binding for a topic the runner does not write
    Map<String, Object> extra = TestPlans.planTree(TestPlans.STARTER);
    identityOf(extra).put("dead_letter_topic_id", TestPlans.DEAD_LETTER_TOPIC_ID);
    e = rejectTree(extra);
    assertEquals(10, e.exitCode);
    assertEquals("PLAN_UNKNOWN_FIELD", e.reason, e.detail);
    // empty or not a string
    Map<String, Object> empty = TestPlans.deadLetterTree(TestPlans.STARTER, "orders_dlq");
    identityOf(empty).put("dead_letter_topic_id", "");
    assertEquals("PLAN_INVALID", rejectTree(empty).reason);
    Map<String, Object> number = TestPlans.deadLetterTree(TestPlans.STARTER, "orders_dlq");
    identityOf(number).put("dead_letter_topic_id", new Json.Num("1"));
    assertEquals("PLAN_WRONG_TYPE", rejectTree(number).reason);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> identityOf(Map<String, Object> tree) {
    return (Map<String, Object>) tree.get("identity");
  }

  @Test
  void aMalformedOnInvalidIsExit10WithItsReason() throws Exception {
    for (String[] c : new String[][] {
        {"{\"policy\":\"stop\",\"topic\":\"x\"}", "PLAN_INVALID"},
        {"{\"policy\":\"dead_letter\",\"topic\":\"raw_orders\"}", "PLAN_INVALID"},
        {"{\"policy\":\"dead_letter\",\"topic\":\"eligible_orders\"}", "PLAN_INVALID"},
        {"{\"policy\":\"dead_letter\",\"topic\":\"bad topic\"}", "PLAN_INVALID"},
        {"{\"policy\":\"dead_letter\"}", "PLAN_MISSING_FIELD"},
        {"{\"policy\":\"dead_letter\",\"topic\":\"x\",\"extra\":1}", "PLAN_UNKNOWN_FIELD"},
        {"\"dead_letter\"", "PLAN_WRONG_TYPE"}}) {
      Map<String, Object> tree = TestPlans.planTree(TestPlans.STARTER);
      artifactOf(tree).put("on_invalid", Json.parse(c[0]).value());
      reseal(tree);
      RunnerExit e = rejectTree(tree);
      assertEquals(10, e.exitCode, c[0]);
      assertEquals(c[1], e.reason, c[0] + ": " + e.detail);
    }
  }
}
