package dev.sluice.runner;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A record failed strict decoding. {@link #code} is one of the stable {@code DECODE_*} codes of
 * docs/artifact-format.md, {@link #field} the field it failed on (null when the record is
 * malformed or not an object) and {@link #rule} the rule that failed. Once the processor has
 * placed it ({@link #at}) it also knows the record's coordinates, its sizes and its top-level
 * field names. None of this is a value of the record, so all of it may be shown, logged, written
 * to the status file and put in dead-letter headers.
 */
public final class DecodeException extends RuntimeException {
  /** Stable code, e.g. {@code DECODE_WRONG_TYPE}. */
  public final String code;
  /** The field name, or null. */
  public final String field;
  /** The rule that failed, e.g. "the field expects BIGINT, got a string". */
  public final String rule;
  /** The record's coordinates and shape, or null before {@link #at}. */
  public final Where where;

  /** Where the record was: topic, partition, offset; its key and value sizes; its field names. */
  public record Where(String topic, int partition, long offset, int keyBytes, int valueBytes, List<String> fields) {
    /** {@code topic-partition@offset}. */
    public String position() {
      return topic + "-" + partition + "@" + offset;
    }

    /** The record part of a stop context (sizes and names only). */
    public Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("topic", topic);
      m.put("partition", partition);
      m.put("offset", offset);
      m.put("key_bytes", keyBytes);
      m.put("value_bytes", valueBytes);
      m.put("fields", fields);
      return m;
    }
  }

  public DecodeException(String code, String field, String rule) {
    this(code, field, rule, null);
  }

  private DecodeException(String code, String field, String rule, Where where) {
    super(code + ": " + (where == null ? "" : "record " + where.position() + ": ")
        + (field == null ? "" : "field '" + field + "': ") + rule, null, false, false);
    this.code = code;
    this.field = field;
    this.rule = rule;
    this.where = where;
  }

  /** The same failure, placed at a record. */
  public DecodeException at(Where w) {
    return new DecodeException(code, field, rule, w);
  }

  /** The detail without the code prefix: position, field and rule. */
  public String detail() {
    return getMessage().substring(code.length() + 2);
  }
}
