package dev.sluice.runner;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;

/**
 * The class-data-sharing training run of the image build ({@code Main cds-training}, run once by
 * runner/Dockerfile under {@code -XX:ArchiveClassesAtExit}): it walks the runner's start path
 * without a broker — plan loading and checks, decoding, predicate, projection, the stop context
 * and the status file, an Admin client and a started-then-closed Kafka Streams client (with a
 * dead-letter sink) pointed at an address that
 * refuses connections — so that the classes a real start loads are in the archive. Nothing it
 * does is visible outside the temporary directory it removes.
 */
final class CdsTraining {
  private CdsTraining() {}

  private static final String PREDICATE = "{\"kind\":\"and\",\"args\":["
      + "{\"kind\":\"compare\",\"op\":\">=\",\"left\":{\"kind\":\"column\",\"name\":\"amount\",\"type\":\"BIGINT\"},"
      + "\"right\":{\"kind\":\"literal\",\"type\":\"BIGINT\",\"value\":\"100\"}},"
      + "{\"kind\":\"or\",\"args\":[{\"kind\":\"is_null\",\"arg\":{\"kind\":\"column\",\"name\":\"note\",\"type\":\"STRING\"},\"negated\":false},"
      + "{\"kind\":\"in\",\"arg\":{\"kind\":\"column\",\"name\":\"note\",\"type\":\"STRING\"},\"list\":[{\"kind\":\"literal\",\"type\":\"STRING\",\"value\":\"x\"}],\"negated\":true}]},"
      + "{\"kind\":\"not\",\"arg\":{\"kind\":\"between\",\"arg\":{\"kind\":\"column\",\"name\":\"score\",\"type\":\"DOUBLE\"},"
      + "\"low\":{\"kind\":\"literal\",\"type\":\"DOUBLE\",\"value\":\"0.5\"},\"high\":{\"kind\":\"literal\",\"type\":\"DOUBLE\",\"value\":\"1\"},\"negated\":false}},"
      + "{\"kind\":\"compare\",\"op\":\"=\",\"left\":{\"kind\":\"column\",\"name\":\"paid\",\"type\":\"BOOLEAN\"},"
      + "\"right\":{\"kind\":\"literal\",\"type\":\"BOOLEAN\",\"value\":true}}]}";

  private static final String ARTIFACT = "{\"format\":\"sluice.runner-artifact\",\"version\":1,\"project\":\"training\","
      + "\"environment\":null,\"model\":\"training\",\"application_id\":\"sluice-training\","
      + "\"input\":{\"topic\":\"training_in\"},\"output\":{\"topic\":\"training_out\"},"
      + "\"schema\":[{\"name\":\"order_id\",\"type\":\"STRING\",\"nullable\":false},"
      + "{\"name\":\"amount\",\"type\":\"BIGINT\",\"nullable\":false},"
      + "{\"name\":\"paid\",\"type\":\"BOOLEAN\",\"nullable\":false},"
      + "{\"name\":\"score\",\"type\":\"DOUBLE\",\"nullable\":true},"
      + "{\"name\":\"note\",\"type\":\"STRING\",\"nullable\":true}],"
      + "\"projection\":[{\"source\":\"order_id\",\"name\":\"order_id\"},{\"source\":\"amount\",\"name\":\"amount\"},"
      + "{\"source\":\"score\",\"name\":\"score\"}],"
      + "\"predicate\":" + PREDICATE + ","
      + "\"image\":\"sha256:" + "0".repeat(64) + "\",\"network\":\"training\",\"initial_offsets\":\"earliest\","
      + "\"ownership\":{\"managed_by\":\"sluice\",\"project\":\"training\",\"environment\":null},"
      + "\"on_invalid\":{\"policy\":\"dead_letter\",\"topic\":\"training_dlq\"}}";

  private static final List<String> RECORDS = List.of(
      "{\"order_id\":\"a\",\"amount\":150,\"paid\":true,\"score\":0.25,\"note\":null}",
      "{\"order_id\":\"b\",\"amount\":50,\"paid\":true,\"score\":2e3,\"note\":\"y\\u00e9\"}",
      "{\"order_id\":\"c\",\"amount\":\"150\",\"paid\":true,\"score\":null,\"note\":null}",
      "{\"order_id\":\"d\",\"amount\":1,\"paid\":true,\"note\":null}",
      "{\"order_id\":\"e\",\"amount\":99999999999999999999,\"paid\":true,\"score\":1,\"note\":null}",
      "not json");

  static void run() throws Exception {
    Path dir = Files.createTempDirectory("sluice-cds-");
    try {
      Object artifact = Json.parse(ARTIFACT).value();
      Map<String, Object> tree = new LinkedHashMap<>();
      tree.put("format", "sluice.runner-plan");
      tree.put("version", new Json.Num("1"));
      tree.put("artifact", artifact);
      tree.put("artifact_sha256", Plan.sha256(Json.canonicalBytes(artifact)));
      // a port nothing listens on: every client fails fast and retries quietly
      tree.put("bootstrap_servers", "127.0.0.1:9");
      Map<String, Object> identity = new LinkedHashMap<>();
      identity.put("cluster_id", "AAAAAAAAAAAAAAAAAAAAAA");
      identity.put("input_topic_id", "AAAAAAAAAAAAAAAAAAAAAQ");
      identity.put("output_topic_id", "AAAAAAAAAAAAAAAAAAAAAg");
      identity.put("dead_letter_topic_id", "AAAAAAAAAAAAAAAAAAAAAw");
      tree.put("identity", identity);
      byte[] bytes = Json.canonicalBytes(tree);
      Path planPath = dir.resolve("plan.json");
      Files.write(planPath, bytes);
      Plan plan = Plan.load(planPath, Plan.sha256(bytes));
      StatusFile status = new StatusFile(dir.resolve("status.json"), "training");
      status.setPlan(plan.sha256(), plan.applicationId(), plan.model());
      status.write("STARTING", null, null, null);

      RecordDecoder decoder = new RecordDecoder(plan.schema());
      DecodeException last = null;
      for (int i = 0; i < 200; i++) {
        for (String r : RECORDS) {
          byte[] value = r.getBytes(StandardCharsets.UTF_8);
          try {
            Object[] row = decoder.decode(value);
            if (plan.predicate().passes(row)) plan.projection().project(row);
          } catch (DecodeException e) {
            last = e.at(new DecodeException.Where("training_in", 0, i, 1, value.length, RecordDecoder.fieldNames(value)));
          }
        }
      }
      RunnerExit stop = Main.Run.classify(last);
      status.fail(stop);
      stop.toJsonLine();
      try {
        Plan.fromBytes(bytes, "0".repeat(64));
      } catch (RunnerExit e) {
        e.toJsonLine();
      }

      try (Admin admin = Admin.create(Main.adminProps(plan))) {
        try {
          admin.describeCluster().clusterId().get(2, TimeUnit.SECONDS);
        } catch (Exception expected) {
          // nothing listens: the classes of the request path are loaded all the same
        }
      }
      KafkaStreams streams = new KafkaStreams(SluiceTopology.build(plan),
          Main.streamsProps(plan, dir.resolve("streams"), "internal"));
      streams.setUncaughtExceptionHandler(e -> StreamThreadExceptionResponse.SHUTDOWN_CLIENT);
      streams.setStateListener((next, previous) -> { });
      streams.start();
      Thread.sleep(2000);
      streams.close(Duration.ofSeconds(10));
      status.write("CLOSED", 143, "SIGTERM", "training");
    } finally {
      try (var paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
