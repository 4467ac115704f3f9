package dev.sluice.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Benchmark baseline: the filter a developer would write by hand for
 * {@code SELECT order_id, amount FROM input WHERE amount >= THRESHOLD AND paid = TRUE}.
 *
 * <p>String serdes; each value is parsed once with Jackson ({@code readTree}); a record passes when
 * {@code amount} is an integral JSON number {@code >= THRESHOLD} and {@code paid} is the JSON
 * boolean {@code true} (SQL semantics: a missing or null field is UNKNOWN and drops the record);
 * a passing record is written as {@code {"order_id":…,"amount":…}}. Tombstones are dropped. Not
 * done here (the runner does it): strict validation of every declared field (unknown, duplicate,
 * missing fields, types, 64-bit range) and canonical number formatting.
 *
 * <p>Same Streams settings as the runner: exactly_once_v2, one stream thread, the rest default.
 * Environment: BOOTSTRAP, APPLICATION_ID, INPUT, OUTPUT, THRESHOLD.
 */
public final class BaselineFilter {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private BaselineFilter() {}

  static List<String> filter(String value, long threshold) throws Exception {
    if (value == null) return List.of();
    JsonNode n = MAPPER.readTree(value);
    JsonNode amount = n.get("amount");
    JsonNode paid = n.get("paid");
    if (amount == null || !amount.isIntegralNumber() || !amount.canConvertToLong()) return List.of();
    if (paid == null || !paid.isBoolean()) return List.of();
    if (!(amount.longValue() >= threshold && paid.booleanValue())) return List.of();
    ObjectNode out = MAPPER.createObjectNode();
    out.set("order_id", n.get("order_id"));
    out.set("amount", amount);
    return List.of(MAPPER.writeValueAsString(out));
  }

  public static void main(String[] args) throws Exception {
    long threshold = Long.parseLong(System.getenv("THRESHOLD"));
    String input = System.getenv("INPUT");
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, System.getenv("APPLICATION_ID"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, System.getenv("BOOTSTRAP"));
    p.put(StreamsConfig.STATE_DIR_CONFIG, "/tmp/streams");
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    StreamsBuilder b = new StreamsBuilder();
    b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .flatMapValues(v -> {
          try {
            return filter(v, threshold);
          } catch (Exception e) {
            throw new IllegalStateException("malformed record", e);
          }
        })
        .to(System.getenv("OUTPUT"), Produced.with(Serdes.String(), Serdes.String()));
    KafkaStreams streams = new KafkaStreams(b.build(), p);
    CountDownLatch done = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      System.out.println("BASELINE_STATE " + now);
      System.out.flush();
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close();
      done.countDown();
    }));
    streams.start();
    done.await();
  }
}
