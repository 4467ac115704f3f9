package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/** The topology as deployed, driven by TopologyTestDriver with the runner's own config. */
class SluiceTopologyTest {
  @TempDir Path tmp;
  TopologyTestDriver driver;
  TestInputTopic<byte[], byte[]> in;
  TestOutputTopic<byte[], byte[]> out;

  void start(Plan plan) {
    Properties props = Main.streamsProps(plan, tmp.resolve("streams"), "internal");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:9092");
    driver = new TopologyTestDriver(SluiceTopology.build(plan), props);
    in = driver.createInputTopic(plan.inputTopic(), new ByteArraySerializer(), new ByteArraySerializer());
    out = driver.createOutputTopic(plan.outputTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  @BeforeEach
  void setUp() throws Exception {
    start(TestPlans.valid(TestPlans.STARTER));
  }

  @AfterEach
  void tearDown() {
    if (driver != null) driver.close();
  }

  static byte[] b(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  static String s(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  static String rec(String id, String amount, boolean paid, String score, String note) {
    return "{\"order_id\":\"" + id + "\",\"amount\":" + amount + ",\"paid\":" + paid + ",\"score\":" + score + ",\"note\":" + note + "}";
  }

  @Test
  void passingRecordsAreProjectedInSelectOrderWithKeysPreserved() {
    in.pipeInput(b("k1"), b(rec("o1", "150", true, "0.5", "\"hi\"")));
    in.pipeInput(b("k2"), b(rec("o2", "99", true, "null", "null")));
    in.pipeInput(b("k3"), b(rec("o3", "100", false, "null", "null")));
    in.pipeInput(b("k4"), b(rec("o4", "100", true, "null", "null")));
    List<KeyValue<byte[], byte[]>> got = out.readKeyValuesToList();
    assertEquals(2, got.size());
    assertEquals("k1", s(got.get(0).key));
    assertEquals("{\"order_id\":\"o1\",\"amount\":150,\"s\":0.5,\"note\":\"hi\"}", s(got.get(0).value));
    assertEquals("k4", s(got.get(1).key));
    assertEquals("{\"order_id\":\"o4\",\"amount\":100,\"s\":null,\"note\":null}", s(got.get(1).value));
  }

  @Test
  void bigintIsWrittenExactly() {
    in.pipeInput(b("k"), b(rec("o", "9223372036854775807", true, "null", "null")));
    in.pipeInput(b("k"), b(rec("o", "9007199254740993", true, "null", "null")));
    assertEquals("{\"order_id\":\"o\",\"amount\":9223372036854775807,\"s\":null,\"note\":null}", s(out.readValue()));
    assertEquals("{\"order_id\":\"o\",\"amount\":9007199254740993,\"s\":null,\"note\":null}", s(out.readValue()));
  }

  @Test
  void doubleIsWrittenAsJavaScriptPrintsIt() {
    in.pipeInput(b("k"), b(rec("o", "100", true, "1e3", "null")));
    in.pipeInput(b("k"), b(rec("o", "100", true, "1E21", "null")));
    in.pipeInput(b("k"), b(rec("o", "100", true, "-0.0", "null")));
    in.pipeInput(b("k"), b(rec("o", "100", true, "0.1", "null")));
    in.pipeInput(b("k"), b(rec("o", "100", true, "1.5e-7", "null")));
    assertTrue(s(out.readValue()).contains("\"s\":1000,"));
    assertTrue(s(out.readValue()).contains("\"s\":1e+21,"));
    assertTrue(s(out.readValue()).contains("\"s\":0,"));
    assertTrue(s(out.readValue()).contains("\"s\":0.1,"));
    assertTrue(s(out.readValue()).contains("\"s\":1.5e-7,"));
  }

  @Test
  void stringsAreEscapedAsJsonStringify() {
    in.pipeInput(b("k"), b(rec("a\\\"b\\u00e9\\u0001\\/", "100", true, "null", "\"\\ud83d\\ude00 \\ud800\"")));
    assertEquals("{\"order_id\":\"a\\\"bé\\u0001/\",\"amount\":100,\"s\":null,\"note\":\"😀 \\ud800\"}", s(out.readValue()));
  }

  @Test
  void tombstonesAreDroppedNotDecoded() {
    in.pipeInput(b("k"), (byte[]) null);
    in.pipeInput(b("k2"), b(rec("o", "100", true, "null", "null")));
    List<TestRecord<byte[], byte[]>> got = out.readRecordsToList();
    assertEquals(1, got.size());
    assertEquals("k2", s(got.get(0).key()));
  }

  @Test
  void nullKeysArePreserved() {
    in.pipeInput((byte[]) null, b(rec("o", "100", true, "null", "null")));
    TestRecord<byte[], byte[]> r = out.readRecord();
    assertNull(r.key());
    assertNotNull(r.value());
  }

  @Test
  void headersAndTimestampsPassThrough() {
    TestRecord<byte[], byte[]> r = new TestRecord<>(b("k"), b(rec("o", "100", true, "null", "null")), null, 12345L);
    r.headers().add("h", b("v"));
    in.pipeInput(r);
    TestRecord<byte[], byte[]> o = out.readRecord();
    assertEquals(12345L, o.timestamp());
    assertArrayEquals(b("v"), o.headers().lastHeader("h").value());
  }

  @Test
  void modelWithoutWherePassesEveryRecord() throws Exception {
    driver.close();
    start(TestPlans.valid("null"));
    in.pipeInput(b("k"), b(rec("o", "-5", false, "null", "null")));
    assertEquals("{\"order_id\":\"o\",\"amount\":-5,\"s\":null,\"note\":null}", s(out.readValue()));
  }

  @Test
  void aBadRecordStopsProcessingAndNothingAfterItIsForwarded() {
    in.pipeInput(b("k1"), b(rec("o1", "150", true, "null", "null")));
    RuntimeException e = assertThrows(RuntimeException.class, () -> in.pipeInput(b("k2"), b("{\"order_id\":1}")));
    RunnerExit x = Main.Run.classify(e);
    assertEquals(13, x.exitCode);
    assertEquals("DECODE_WRONG_TYPE", x.reason);
    assertTrue(x.detail.contains("raw_orders-0@1"), x.detail);
    assertEquals(1, out.readRecordsToList().size());
  }

  @Test
  void theStopReasonNamesPositionFieldAndRuleButNoValueOfTheRecord() {
    String secret = "{\"order_id\":\"s3cr3t-id\",\"amount\":\"4111111111111111\",\"paid\":true,\"score\":null,\"note\":\"pw=hunter2\"}";
    in.pipeInput(b("key-1"), b(rec("o1", "150", true, "null", "null")));
    RuntimeException e = assertThrows(RuntimeException.class, () -> in.pipeInput(b("key-2"), b(secret)));
    RunnerExit x = Main.Run.classify(e);
    assertEquals("DECODE_WRONG_TYPE", x.reason);
    assertEquals("amount", x.context().get("field"));
    assertEquals("the field expects BIGINT, got a string", x.context().get("rule"));
    @SuppressWarnings("unchecked")
    Map<String, Object> record = (Map<String, Object>) x.context().get("record");
    assertEquals("raw_orders", record.get("topic"));
    assertEquals(0, record.get("partition"));
    assertEquals(1L, record.get("offset"));
    assertEquals(5, record.get("key_bytes"));
    assertEquals(secret.length(), record.get("value_bytes"));
    assertEquals(List.of("order_id", "amount", "paid", "score", "note"), record.get("fields"));
    String line = x.toJsonLine();
    for (String value : List.of("s3cr3t", "4111", "hunter2", "key-2")) {
      assertFalse(line.contains(value), line);
      assertFalse(x.detail.contains(value), x.detail);
    }
    assertTrue(line.contains("\"sluice_runner_exit\":13"), line);
  }

  @Test
  void aMalformedRecordReportsItsSizeAndNoFieldNamesItDoesNotHave() {
    RuntimeException e = assertThrows(RuntimeException.class, () -> in.pipeInput(b("k"), b("not json at all")));
    RunnerExit x = Main.Run.classify(e);
    assertEquals("DECODE_MALFORMED", x.reason);
    assertNull(x.context().get("field"));
    @SuppressWarnings("unchecked")
    Map<String, Object> record = (Map<String, Object>) x.context().get("record");
    assertEquals(15, record.get("value_bytes"));
    assertEquals(List.of(), record.get("fields"));
    assertFalse(x.toJsonLine().contains("not json"), x.toJsonLine());
  }

  /** Every shared decode rejection, through the deployed topology, with the runner's exit mapping. */
  @TestFactory
  List<DynamicTest> everyDecodeRejectionStopsTheTopologyWithItsCode() throws Exception {
    Map<?, ?> v = Vectors.load();
    List<DynamicTest> tests = new ArrayList<>();
    for (Object o : (List<?>) v.get("decode_rejects")) {
      Map<?, ?> c = (Map<?, ?>) o;
      // the vectors' schema has region/qty; map the record onto this plan's schema only when it
      // is structurally about those fields: run against a plan built from the vectors' schema
      tests.add(dynamicTest("topology rejects: " + c.get("name"), () -> {
        Plan plan = vectorsPlan(v);
        try (TopologyTestDriver d = new TopologyTestDriver(SluiceTopology.build(plan), testProps(plan))) {
          TestInputTopic<byte[], byte[]> i = d.createInputTopic(plan.inputTopic(), new ByteArraySerializer(), new ByteArraySerializer());
          TestOutputTopic<byte[], byte[]> ot = d.createOutputTopic(plan.outputTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
          RuntimeException e = assertThrows(RuntimeException.class, () -> i.pipeInput(b("k"), b((String) c.get("record"))));
          RunnerExit x = Main.Run.classify(e);
          assertEquals(13, x.exitCode);
          assertEquals(c.get("error"), x.reason);
          assertTrue(ot.isEmpty());
        }
      }));
    }
    return tests;
  }

  Properties testProps(Plan plan) {
    Properties props = Main.streamsProps(plan, tmp.resolve("streams2"), "internal");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:9092");
    return props;
  }

  /** A plan whose schema is the vectors' schema, projecting every field, with no predicate. */
  static Plan vectorsPlan(Map<?, ?> v) throws Exception {
    StringBuilder schema = new StringBuilder("[");
    StringBuilder proj = new StringBuilder("[");
    for (Field f : Vectors.schema(v)) {
      if (schema.length() > 1) {
        schema.append(',');
        proj.append(',');
      }
      schema.append("{\"name\":\"").append(f.name()).append("\",\"type\":\"").append(f.type()).append("\",\"nullable\":").append(f.nullable()).append('}');
      proj.append("{\"source\":\"").append(f.name()).append("\",\"name\":\"").append(f.name()).append("\"}");
    }
    schema.append(']');
    proj.append(']');
    @SuppressWarnings("unchecked")
    Map<String, Object> tree = TestPlans.planTree("null");
    @SuppressWarnings("unchecked")
    Map<String, Object> artifact = (Map<String, Object>) tree.get("artifact");
    artifact.put("schema", Json.parse(schema.toString()).value());
    artifact.put("projection", Json.parse(proj.toString()).value());
    tree.put("artifact_sha256", Plan.sha256(Json.canonicalBytes(artifact)));
    return TestPlans.load(TestPlans.bytes(tree));
  }

  /** Every shared predicate case through the topology: passes exactly when expected is TRUE. */
  @TestFactory
  List<DynamicTest> everyPredicateVectorFiltersThroughTheTopology() throws Exception {
    Map<?, ?> v = Vectors.load();
    List<DynamicTest> tests = new ArrayList<>();
    for (Object o : (List<?>) v.get("predicates")) {
      Map<?, ?> p = (Map<?, ?>) o;
      tests.add(dynamicTest("topology filter: " + p.get("name"), () -> {
        Plan base = vectorsPlan(v);
        Predicate pred = Predicate.compile(p.get("ast"), base.schema());
        try (TopologyTestDriver d = new TopologyTestDriver(
            SluiceTopology.build(base.inputTopic(), base.outputTopic(), new RecordDecoder(base.schema()), pred, base.projection(), null),
            testProps(base))) {
          TestInputTopic<byte[], byte[]> i = d.createInputTopic(base.inputTopic(), new ByteArraySerializer(), new ByteArraySerializer());
          TestOutputTopic<byte[], byte[]> ot = d.createOutputTopic(base.outputTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
          for (Object co : (List<?>) p.get("cases")) {
            Map<?, ?> c = (Map<?, ?>) co;
            i.pipeInput(b("k"), b((String) c.get("record")));
            boolean expectPass = Boolean.TRUE.equals(c.get("expected"));
            assertEquals(expectPass, !ot.isEmpty(), (String) c.get("record"));
            if (expectPass) ot.readRecord();
          }
        }
      }));
    }
    return tests;
  }
}
