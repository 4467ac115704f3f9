package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fixed Streams configuration, exit classification and the status file. */
class MainTest {
  @TempDir Path tmp;

  @Test
  void streamsConfigIsExactlyOnceWithoutResetAndLeavesTheGroupOnClose() throws Exception {
    Plan plan = TestPlans.valid(TestPlans.STARTER);
    Properties p = Main.streamsProps(plan, Path.of("/var/lib/sluice/streams"), "internal");
    assertEquals("sluice-orders-eligible_orders", p.get("application.id"));
    assertEquals("kafka:9092", p.get("bootstrap.servers"));
    assertEquals("/var/lib/sluice/streams", p.get("state.dir"));
    assertEquals("exactly_once_v2", p.get("processing.guarantee"));
    assertEquals("none", p.get("consumer.auto.offset.reset"));
    assertEquals(true, p.get("main.consumer.internal.leave.group.on.close"));
    assertEquals(100, p.get("main.consumer.fetch.max.wait.ms"));
    assertFalse(p.containsKey("main.consumer.group.instance.id"));
    Properties s = Main.streamsProps(plan, tmp, "static");
    assertEquals("sluice-orders-eligible_orders-0", s.get("main.consumer.group.instance.id"));
    assertThrows(IllegalArgumentException.class, () -> Main.streamsProps(plan, tmp, "bogus"));
  }

  @Test
  void missingOffsetsFromStreamsAreExit14() {
    RunnerExit e = Main.Run.classify(new StreamsException("No valid committed offset found",
        new NoOffsetForPartitionException(new TopicPartition("raw_orders", 0))));
    assertEquals(14, e.exitCode);
    assertEquals("OFFSETS_MISSING", e.reason);
  }

  @Test
  void anUnresolvableBootstrapAddressIsKafkaUnreachable() {
    // the broker's container is down: its name does not resolve on the Docker network
    Properties p = new Properties();
    p.put("bootstrap.servers", "broker.invalid:9092");
    RunnerExit e = assertThrows(RunnerExit.class, () -> IdentityGate.open(p).close());
    assertEquals(15, e.exitCode);
    assertEquals("KAFKA_UNREACHABLE", e.reason);
  }

  @Test
  void otherStreamsErrorsAreExit15() {
    RunnerExit e = Main.Run.classify(new StreamsException("boom"));
    assertEquals(15, e.exitCode);
    assertEquals("STREAMS_FATAL", e.reason);
  }

  @Test
  void theStatusFileIsReplacedAtomicallyWithCanonicalJson() throws Exception {
    Path f = tmp.resolve("sluice/status.json");
    StatusFile status = new StatusFile(f, "g7");
    status.setPlan("ab".repeat(32), "app", "model");
    status.write("RUNNING", null, null, null);
    status.write("CLOSED", 143, "SIGTERM", "closed and committed");
    String text = Files.readString(f);
    Json.Parsed parsed = Json.parse(text);
    Map<?, ?> m = (Map<?, ?>) parsed.value();
    assertEquals(text.trim(), Json.canonical(m));
    assertEquals("CLOSED", m.get("state"));
    assertEquals("g7", m.get("generation"));
    assertEquals("143", m.get("exit_code").toString());
    assertEquals("SIGTERM", m.get("reason"));
    assertEquals("ab".repeat(32), m.get("plan_sha256"));
    assertFalse(Files.exists(tmp.resolve("sluice/status.json.tmp")));
  }
}
