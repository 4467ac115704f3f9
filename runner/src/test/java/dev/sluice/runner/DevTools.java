package dev.sluice.runner;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Test helpers, kept in the test tree so the production jar holds only the runner: create
 * topics, print IDs, produce/consume (read_committed, stopping at the last stable offset),
 * read group offsets and watch a group's state. tests/runner_fixture.ts runs it inside the
 * runner image with {@code target/test-classes} mounted.
 *
 * <pre>
 * java -cp '/opt/sluice/lib/*:/opt/sluice/test-classes' dev.sluice.runner.DevTools BOOTSTRAP CMD ARGS...
 *   create-topic TOPIC PARTITIONS      prints the topic ID
 *   topic-id TOPIC | cluster-id
 *   produce TOPIC                      stdin lines "key\tvalue" (value \N = tombstone)
 *   produce-json TOPIC                 stdin JSON lines {"key_b64","value_b64","headers":[[name,b64]]}
 *                                      (exact bytes, headers in order; null key or value allowed)
 *   consume TOPIC MAX TIMEOUT_MS       read_committed from the beginning to the end, JSON lines
 *                                      (key, value as UTF-8 text; key_b64, value_b64, headers
 *                                      [[name, b64]] in order, partition, offset, timestamp)
 *   group-offsets GROUP                {"partition":offset,...}
 *   group-state GROUP
 *   watch-group GROUP SECONDS          "epoch_ms STATE members" on each change
 *   set-offsets GROUP TOPIC P=OFFSET... alterConsumerGroupOffsets
 * </pre>
 */
public final class DevTools {
  private DevTools() {}

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String cmd = args[1];
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    switch (cmd) {
      case "create-topic" -> {
        try (Admin a = Admin.create(ap)) {
          a.createTopics(List.of(new NewTopic(args[2], Integer.parseInt(args[3]), (short) 1))).all().get();
          System.out.println(describe(a, args[2]).topicId());
        }
      }
      case "topic-id" -> {
        try (Admin a = Admin.create(ap)) {
          System.out.println(describe(a, args[2]).topicId());
        }
      }
      case "cluster-id" -> {
        try (Admin a = Admin.create(ap)) {
          System.out.println(a.describeCluster().clusterId().get());
        }
      }
      case "produce" -> produce(bootstrap, args[2]);
      case "produce-json" -> produceJson(bootstrap, args[2]);
      case "consume" -> consume(bootstrap, args[2], Integer.parseInt(args[3]), Long.parseLong(args[4]));
      case "group-offsets" -> {
        try (Admin a = Admin.create(ap)) {
          Map<TopicPartition, OffsetAndMetadata> m = a.listConsumerGroupOffsets(args[2]).partitionsToOffsetAndMetadata().get();
          Map<String, Object> out = new LinkedHashMap<>();
          m.entrySet().stream().sorted(Map.Entry.comparingByKey((x, y) -> x.toString().compareTo(y.toString())))
              .forEach(e -> out.put(e.getKey().toString(), e.getValue() == null ? Json.NULL : new Json.Num(Long.toString(e.getValue().offset()))));
          System.out.println(Json.canonical(out));
        }
      }
      case "group-state" -> {
        try (Admin a = Admin.create(ap)) {
          ConsumerGroupDescription d = a.describeConsumerGroups(List.of(args[2])).describedGroups().get(args[2]).get();
          System.out.println(d.groupState() + " " + d.members().size());
        }
      }
      case "watch-group" -> {
        try (Admin a = Admin.create(ap)) {
          long end = System.currentTimeMillis() + Long.parseLong(args[3]) * 1000;
          String last = "";
          while (System.currentTimeMillis() < end) {
            ConsumerGroupDescription d = a.describeConsumerGroups(List.of(args[2])).describedGroups().get(args[2]).get();
            String now = d.groupState() + " " + d.members().size();
            if (!now.equals(last)) {
              System.out.println(System.currentTimeMillis() + " " + now);
              System.out.flush();
              last = now;
            }
            Thread.sleep(50);
          }
        }
      }
      case "set-offsets" -> {
        try (Admin a = Admin.create(ap)) {
          Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
          for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=");
            m.put(new TopicPartition(args[3], Integer.parseInt(kv[0])), new OffsetAndMetadata(Long.parseLong(kv[1])));
          }
          a.alterConsumerGroupOffsets(args[2], m).all().get();
        }
      }
      default -> throw new IllegalArgumentException("unknown command " + cmd);
    }
  }

  private static TopicDescription describe(Admin a, String topic) throws Exception {
    return a.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
  }

  private static void produce(String bootstrap, String topic) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        int tab = line.indexOf('\t');
        byte[] key = line.substring(0, tab).getBytes(StandardCharsets.UTF_8);
        String v = line.substring(tab + 1);
        byte[] value = v.equals("\\N") ? null : v.getBytes(StandardCharsets.UTF_8);
        producer.send(new ProducerRecord<>(topic, key, value)).get();
      }
      producer.flush();
    }
  }

  private static byte[] b64(Object v) {
    return v == Json.NULL ? null : java.util.Base64.getDecoder().decode((String) v);
  }

  private static Object b64(byte[] b) {
    return b == null ? Json.NULL : java.util.Base64.getEncoder().encodeToString(b);
  }

  private static void produceJson(String bootstrap, String topic) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        Map<?, ?> r = (Map<?, ?>) Json.parse(line).value();
        ProducerRecord<byte[], byte[]> rec = new ProducerRecord<>(topic, b64(r.get("key_b64")), b64(r.get("value_b64")));
        for (Object h : (List<?>) r.get("headers")) {
          List<?> kv = (List<?>) h;
          rec.headers().add((String) kv.get(0), b64(kv.get(1)));
        }
        producer.send(rec).get();
      }
      producer.flush();
    }
  }

  private static void consume(String bootstrap, String topic, int max, long timeoutMs) throws Exception {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      c.partitionsFor(topic).forEach(i -> tps.add(new TopicPartition(topic, i.partition())));
      c.assign(tps);
      c.seekToBeginning(tps);
      // read_committed end offsets are the last stable offsets: stop there (markers included)
      Map<TopicPartition, Long> end = c.endOffsets(tps);
      int n = 0;
      long deadline = System.currentTimeMillis() + timeoutMs;
      while (n < max && System.currentTimeMillis() < deadline) {
        boolean done = true;
        for (TopicPartition tp : tps) if (c.position(tp) < end.get(tp)) done = false;
        if (done) break;
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
          Map<String, Object> out = new LinkedHashMap<>();
          out.put("key", r.key() == null ? Json.NULL : new String(r.key(), StandardCharsets.UTF_8));
          out.put("offset", new Json.Num(Long.toString(r.offset())));
          out.put("partition", new Json.Num(Integer.toString(r.partition())));
          out.put("value", r.value() == null ? Json.NULL : new String(r.value(), StandardCharsets.UTF_8));
          out.put("key_b64", b64(r.key()));
          out.put("value_b64", b64(r.value()));
          List<Object> headers = new ArrayList<>();
          r.headers().forEach(h -> headers.add(List.of(h.key(), b64(h.value()))));
          out.put("headers", headers);
          out.put("timestamp", new Json.Num(Long.toString(r.timestamp())));
          System.out.println(Json.canonical(out));
          n++;
        }
      }
      System.out.flush();
    }
  }
}
