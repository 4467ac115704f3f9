package dev.sluice.bench;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Benchmark limit: the smallest exactly-once read-process-write loop without Kafka Streams — one
 * plain consumer (read_committed, no auto commit) and one transactional producer; each record is
 * filtered by {@link BaselineFilter#filter} and a passing one written with its key; every 100 ms
 * (the commit interval Kafka Streams uses under exactly_once_v2) the consumed offsets are sent to
 * the transaction and the transaction is committed.
 *
 * <p>One member, one transaction at a time, no rebalance handling (the benchmark starts one
 * instance on a group nobody else uses, with committed offsets set beforehand, so the consumer's
 * auto.offset.reset is {@code none}). What Streams adds above this loop (tasks, the record cache,
 * punctuation, state stores, rebalance protocol, metrics) is what the difference measures.
 * Environment: BOOTSTRAP, GROUP, INPUT, OUTPUT, THRESHOLD.
 */
public final class EosLoop {
  private static final long COMMIT_INTERVAL_MS = 100;

  private EosLoop() {}

  public static void main(String[] args) throws Exception {
    long threshold = Long.parseLong(System.getenv("THRESHOLD"));
    String group = System.getenv("GROUP");
    String output = System.getenv("OUTPUT");
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, System.getenv("BOOTSTRAP"));
    c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, System.getenv("BOOTSTRAP"));
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, group + "-eos-loop");
    AtomicBoolean running = new AtomicBoolean(true);
    try (KafkaConsumer<String, String> consumer =
            new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer());
        KafkaProducer<String, String> producer =
            new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      Thread main = Thread.currentThread();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        running.set(false);
        consumer.wakeup();
        try {
          main.join(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }));
      producer.initTransactions();
      consumer.subscribe(List.of(System.getenv("INPUT")));
      Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
      boolean open = false;
      long opened = 0;
      System.out.println("EOS_LOOP_STATE RUNNING");
      System.out.flush();
      while (running.get()) {
        ConsumerRecords<String, String> records;
        try {
          records = consumer.poll(Duration.ofMillis(100));
        } catch (WakeupException e) {
          break;
        }
        for (ConsumerRecord<String, String> r : records) {
          if (!open) {
            producer.beginTransaction();
            open = true;
            opened = System.currentTimeMillis();
          }
          for (String out : BaselineFilter.filter(r.value(), threshold)) {
            producer.send(new ProducerRecord<>(output, r.key(), out));
          }
          pending.put(
              new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        if (open && System.currentTimeMillis() - opened >= COMMIT_INTERVAL_MS) {
          producer.sendOffsetsToTransaction(pending, consumer.groupMetadata());
          producer.commitTransaction();
          pending.clear();
          open = false;
        }
      }
      if (open) producer.abortTransaction();
    }
  }
}
