package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/** Both on_invalid policies through the deployed topology (TopologyTestDriver, runner config). */
class DeadLetterTopologyTest {
  @TempDir Path tmp;

  static byte[] b(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  static String s(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  static String rec(String id, long amount) {
    return "{\"order_id\":\"" + id + "\",\"amount\":" + amount + ",\"paid\":true,\"score\":null,\"note\":null}";
  }

  final class Driven implements AutoCloseable {
    final TopologyTestDriver driver;
    final TestInputTopic<byte[], byte[]> in;
    final TestOutputTopic<byte[], byte[]> out;
    final TestOutputTopic<byte[], byte[]> dead;

    Driven(Plan plan) {
      Properties props = Main.streamsProps(plan, tmp.resolve("streams"), "internal");
      props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:9092");
      driver = new TopologyTestDriver(SluiceTopology.build(plan), props);
      in = driver.createInputTopic(plan.inputTopic(), new ByteArraySerializer(), new ByteArraySerializer());
      out = driver.createOutputTopic(plan.outputTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
      dead = driver.createOutputTopic("orders_dlq", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public void close() {
      driver.close();
    }
  }

  static Plan deadLetterPlan() throws Exception {
    return TestPlans.load(TestPlans.bytes(TestPlans.deadLetterTree(TestPlans.STARTER, "orders_dlq")));
  }

  @Test
  void underDeadLetterABadRecordGoesUnchangedToTheDeadLetterTopicAndProcessingContinues() throws Exception {
    try (Driven d = new Driven(deadLetterPlan())) {
      d.in.pipeInput(b("k1"), b(rec("o1", 150)));
      byte[] badValue = b("{\"order_id\":\"o2\",\"amount\":\"150\",\"paid\":true,\"score\":null,\"note\":null}");
      TestRecord<byte[], byte[]> bad = new TestRecord<>(b("k2"), badValue, null, 777L);
      bad.headers().add("trace", b("t-1"));
      bad.headers().add("trace", b("t-2"));
      d.in.pipeInput(bad);
      d.in.pipeInput(b("k3"), b(rec("o3", 250)));

      List<TestRecord<byte[], byte[]>> out = d.out.readRecordsToList();
      assertEquals(List.of("k1", "k3"), out.stream().map(r -> s(r.key())).toList());
      assertEquals("{\"order_id\":\"o3\",\"amount\":250,\"s\":null,\"note\":null}", s(out.get(1).value()));

      List<TestRecord<byte[], byte[]>> dead = d.dead.readRecordsToList();
      assertEquals(1, dead.size());
      TestRecord<byte[], byte[]> dl = dead.get(0);
      assertArrayEquals(b("k2"), dl.key());
      assertArrayEquals(badValue, dl.value());
      assertEquals(777L, dl.timestamp());
      List<String> headers = new ArrayList<>();
      for (Header h : dl.headers()) headers.add(h.key() + "=" + s(h.value()));
      assertEquals(List.of(
          "trace=t-1",
          "trace=t-2",
          "sluice.dead_letter.reason=DECODE_WRONG_TYPE",
          "sluice.dead_letter.field=amount",
          "sluice.dead_letter.rule=the field expects BIGINT, got a string",
          "sluice.dead_letter.topic=raw_orders",
          "sluice.dead_letter.partition=0",
          "sluice.dead_letter.offset=1",
          "sluice.dead_letter.model=eligible_orders",
          "sluice.dead_letter.application_id=sluice-orders-eligible_orders"), headers);
    }
  }

  @Test
  void aMalformedRecordHasNoFieldHeaderAndANullKeyStaysNull() throws Exception {
    try (Driven d = new Driven(deadLetterPlan())) {
      d.in.pipeInput((byte[]) null, b("{not json"));
      TestRecord<byte[], byte[]> dl = d.dead.readRecord();
      assertNull(dl.key());
      assertArrayEquals(b("{not json"), dl.value());
      assertEquals("DECODE_MALFORMED", s(dl.headers().lastHeader("sluice.dead_letter.reason").value()));
      assertNull(dl.headers().lastHeader("sluice.dead_letter.field"));
      assertTrue(d.out.isEmpty());
    }
  }

  @Test
  void tombstonesAreDroppedNotDeadLettered() throws Exception {
    try (Driven d = new Driven(deadLetterPlan())) {
      d.in.pipeInput(b("k"), (byte[]) null);
      assertTrue(d.dead.isEmpty());
      assertTrue(d.out.isEmpty());
    }
  }

  @Test
  void underStopTheSameRecordStopsTheTopologyAndNothingIsDeadLettered() throws Exception {
    try (Driven d = new Driven(TestPlans.valid(TestPlans.STARTER))) {
      d.in.pipeInput(b("k1"), b(rec("o1", 150)));
      RuntimeException e = assertThrows(RuntimeException.class,
          () -> d.in.pipeInput(b("k2"), b("{\"order_id\":\"o2\",\"amount\":\"150\",\"paid\":true,\"score\":null,\"note\":null}")));
      assertEquals("DECODE_WRONG_TYPE", Main.Run.classify(e).reason);
      assertEquals(1, d.out.readRecordsToList().size());
      assertTrue(d.dead.isEmpty());
    }
  }

  /** Every shared decode rejection is dead-lettered with its own reason, byte for byte. */
  @TestFactory
  List<DynamicTest> everyDecodeRejectionIsDeadLetteredWithItsCode() throws Exception {
    Map<?, ?> v = Vectors.load();
    List<DynamicTest> tests = new ArrayList<>();
    for (Object o : (List<?>) v.get("decode_rejects")) {
      Map<?, ?> c = (Map<?, ?>) o;
      tests.add(dynamicTest("dead letter: " + c.get("name"), () -> {
        Plan base = SluiceTopologyTest.vectorsPlan(v);
        Properties props = Main.streamsProps(base, tmp.resolve("streams-" + c.get("name").hashCode()), "internal");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:9092");
        SluiceTopology.DeadLetter dl = new SluiceTopology.DeadLetter("orders_dlq", base.model(), base.applicationId());
        try (TopologyTestDriver d = new TopologyTestDriver(SluiceTopology.build(base.inputTopic(), base.outputTopic(),
            new RecordDecoder(base.schema()), base.predicate(), base.projection(), dl), props)) {
          TestInputTopic<byte[], byte[]> i = d.createInputTopic(base.inputTopic(), new ByteArraySerializer(), new ByteArraySerializer());
          TestOutputTopic<byte[], byte[]> ot = d.createOutputTopic(base.outputTopic(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
          TestOutputTopic<byte[], byte[]> dt = d.createOutputTopic("orders_dlq", new ByteArrayDeserializer(), new ByteArrayDeserializer());
          byte[] value = b((String) c.get("record"));
          i.pipeInput(b("k"), value);
          TestRecord<byte[], byte[]> r = dt.readRecord();
          assertArrayEquals(value, r.value());
          assertEquals(c.get("error"), s(r.headers().lastHeader("sluice.dead_letter.reason").value()));
          assertTrue(ot.isEmpty());
          assertTrue(dt.isEmpty());
        }
      }));
    }
    return tests;
  }
}
