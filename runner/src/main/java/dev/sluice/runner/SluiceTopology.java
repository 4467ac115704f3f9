package dev.sluice.runner;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * source(input) → strict decode → filter (TRUE only) → project → sink(output). Keys are passed
 * through as bytes; null values (tombstones) are dropped without decoding.
 *
 * <p>A record that fails decoding, under {@code on_invalid: stop} (the default), throws
 * {@link DecodeException} out of the processor: the stream thread dies, the uncaught-exception
 * handler shuts the client down and the open EOS transaction (output and offsets of everything
 * since the last commit) is aborted, so nothing past the record is committed (exit 13).
 *
 * <p>Under {@code on_invalid: dead_letter} the record is forwarded unchanged (key, value,
 * timestamp, original headers) to the dead-letter sink with {@link DeadLetterHeader} names appended, and
 * processing continues. The dead-letter sink writes through the same producer as the output
 * sink, so the dead letter is in the same exactly-once transaction as the offset commit that
 * moves past it: either both are visible to read_committed consumers, or neither.
 */
public final class SluiceTopology {
  private SluiceTopology() {}

  static final String SOURCE = "sluice-source";
  static final String FILTER = "sluice-filter";
  static final String OUTPUT_SINK = "sluice-sink";
  static final String DEAD_LETTER_SINK = "sluice-dead-letter";

  /** Header names added to a dead letter, after the record's own headers. */
  public static final class DeadLetterHeader {
    private DeadLetterHeader() {}

    /** The DECODE_* reason. */
    public static final String REASON = "sluice.dead_letter.reason";
    /** The field the rule failed on (absent when the record is malformed or not an object). */
    public static final String FIELD = "sluice.dead_letter.field";
    /** The rule that failed, in words (never a value of the record). */
    public static final String RULE = "sluice.dead_letter.rule";
    /** The input topic, partition and offset of the record (decimal strings). */
    public static final String TOPIC = "sluice.dead_letter.topic";
    public static final String PARTITION = "sluice.dead_letter.partition";
    public static final String OFFSET = "sluice.dead_letter.offset";
    /** The model and application ID that rejected it. */
    public static final String MODEL = "sluice.dead_letter.model";
    public static final String APPLICATION_ID = "sluice.dead_letter.application_id";
  }

  /** What the dead-letter policy needs: the topic, and the names put in the headers. */
  public record DeadLetter(String topic, String model, String applicationId) {}

  /** Builds the topology for a validated plan's parts ({@code deadLetter} null: stop). */
  public static Topology build(String inputTopic, String outputTopic, RecordDecoder decoder, Predicate predicate,
      Projection projection, DeadLetter deadLetter) {
    Topology t = new Topology();
    t.addSource(SOURCE, new ByteArrayDeserializer(), new ByteArrayDeserializer(), inputTopic);
    t.addProcessor(FILTER, () -> new FilterProcessor(decoder, predicate, projection, deadLetter), SOURCE);
    t.addSink(OUTPUT_SINK, outputTopic, new ByteArraySerializer(), new ByteArraySerializer(), FILTER);
    if (deadLetter != null) {
      t.addSink(DEAD_LETTER_SINK, deadLetter.topic(), new ByteArraySerializer(), new ByteArraySerializer(), FILTER);
    }
    return t;
  }

  /** Builds the topology for a plan. */
  public static Topology build(Plan plan) {
    DeadLetter dl = plan.deadLetterTopic() == null ? null
        : new DeadLetter(plan.deadLetterTopic(), plan.model(), plan.applicationId());
    return build(plan.inputTopic(), plan.outputTopic(), new RecordDecoder(plan.schema()), plan.predicate(),
        plan.projection(), dl);
  }

  static final class FilterProcessor implements Processor<byte[], byte[], byte[], byte[]> {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceTopology.class);

    private final RecordDecoder decoder;
    private final Predicate predicate;
    private final Projection projection;
    private final DeadLetter deadLetter;
    private ProcessorContext<byte[], byte[]> context;
    private long deadLetters;

    FilterProcessor(RecordDecoder decoder, Predicate predicate, Projection projection, DeadLetter deadLetter) {
      this.decoder = decoder;
      this.predicate = predicate;
      this.projection = projection;
      this.deadLetter = deadLetter;
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
      this.context = context;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
      if (record.value() == null) return; // tombstone: dropped, not decoded
      Object[] row;
      try {
        row = decoder.decode(record.value());
      } catch (DecodeException e) {
        DecodeException placed = e.at(where(record));
        if (deadLetter == null) throw placed;
        context.forward(record.withHeaders(deadLetterHeaders(record.headers(), placed)), DEAD_LETTER_SINK);
        deadLetters++;
        // every dead letter up to 10, then every 1000th: a flood must not flood the log too
        if (deadLetters <= 10 || deadLetters % 1000 == 0) {
          LOG.warn("dead letter #{} to {}: {} {}", deadLetters, deadLetter.topic(), placed.code, placed.detail());
        }
        return;
      }
      if (predicate.passes(row)) {
        context.forward(record.withValue(projection.project(row)), OUTPUT_SINK);
      }
    }

    private DecodeException.Where where(Record<byte[], byte[]> record) {
      RecordMetadata m = context.recordMetadata().orElse(null);
      return new DecodeException.Where(
          m == null ? "unknown" : m.topic(),
          m == null ? -1 : m.partition(),
          m == null ? -1 : m.offset(),
          record.key() == null ? 0 : record.key().length,
          record.value().length,
          RecordDecoder.fieldNames(record.value()));
    }

    private Headers deadLetterHeaders(Headers original, DecodeException e) {
      Headers h = new RecordHeaders(original.toArray());
      add(h, DeadLetterHeader.REASON, e.code);
      if (e.field != null) add(h, DeadLetterHeader.FIELD, e.field);
      add(h, DeadLetterHeader.RULE, e.rule);
      add(h, DeadLetterHeader.TOPIC, e.where.topic());
      add(h, DeadLetterHeader.PARTITION, Integer.toString(e.where.partition()));
      add(h, DeadLetterHeader.OFFSET, Long.toString(e.where.offset()));
      add(h, DeadLetterHeader.MODEL, deadLetter.model());
      add(h, DeadLetterHeader.APPLICATION_ID, deadLetter.applicationId());
      return h;
    }

    private static void add(Headers h, String name, String value) {
      h.add(name, value.getBytes(StandardCharsets.UTF_8));
    }
  }
}
