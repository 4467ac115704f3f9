package dev.sluice.runner;

import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * source(input) → strict decode → filter (TRUE only) → project → sink(output). Keys are passed
 * through as bytes; null values (tombstones) are dropped without decoding. A record that fails
 * decoding throws {@link DecodeException} out of the processor: the stream thread dies, the
 * uncaught-exception handler shuts the client down and the open EOS transaction (output and
 * offsets of everything since the last commit) is aborted, so nothing past the record is
 * committed.
 */
public final class SluiceTopology {
  private SluiceTopology() {}

  /** Builds the topology for a validated plan's parts. */
  public static Topology build(String inputTopic, String outputTopic, RecordDecoder decoder, Predicate predicate,
      Projection projection) {
    Topology t = new Topology();
    t.addSource("sluice-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), inputTopic);
    t.addProcessor("sluice-filter", () -> new FilterProcessor(decoder, predicate, projection), "sluice-source");
    t.addSink("sluice-sink", outputTopic, new ByteArraySerializer(), new ByteArraySerializer(), "sluice-filter");
    return t;
  }

  /** Builds the topology for a plan. */
  public static Topology build(Plan plan) {
    return build(plan.inputTopic(), plan.outputTopic(), new RecordDecoder(plan.schema()), plan.predicate(),
        plan.projection());
  }

  static final class FilterProcessor implements Processor<byte[], byte[], byte[], byte[]> {
    private final RecordDecoder decoder;
    private final Predicate predicate;
    private final Projection projection;
    private ProcessorContext<byte[], byte[]> context;

    FilterProcessor(RecordDecoder decoder, Predicate predicate, Projection projection) {
      this.decoder = decoder;
      this.predicate = predicate;
      this.projection = projection;
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
        String where = context.recordMetadata()
            .map(m -> m.topic() + "-" + m.partition() + "@" + m.offset())
            .orElse("unknown position");
        throw new DecodeException(e.code, e.field, "record " + where + ": " + e.rule);
      }
      if (predicate.passes(row)) {
        context.forward(record.withValue(projection.project(row)));
      }
    }
  }
}
