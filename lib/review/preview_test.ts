// Unit tests of the preview's evaluation (pure): records at the predicate's edges, three-valued
// logic with nulls, 64-bit values above 2^53, undecodable records with the runner's reasons,
// tombstones, the choice of the last N records and the examples (output columns only).
import assert from "node:assert/strict";
import { checkPredicateSql } from "../project/model.ts";
import type { SchemaField } from "../expr/schema.ts";
import type { SampledRecord } from "../providers/kafka/port.ts";
import { evaluateSample, PREVIEW_DEFAULTS, previewSummary } from "./preview.ts";
import type { PreviewTarget } from "./preview.ts";

const schema: SchemaField[] = [
  { name: "order_id", type: "STRING", nullable: false },
  { name: "amount", type: "BIGINT", nullable: false },
  { name: "qty", type: "BIGINT", nullable: true },
  { name: "card_token", type: "STRING", nullable: true },
];

function target(oldSql: string | null, newSql: string): PreviewTarget {
  return {
    model: "m",
    input_topic: "in",
    schema,
    projection: [
      { source: "order_id", name: "order_id" },
      { source: "amount", name: "amount" },
      { source: "card_token", name: "card_token" },
    ],
    old: oldSql === null ? null : checkPredicateSql(oldSql, schema),
    new: checkPredicateSql(newSql, schema),
  };
}

let offset = 0n;
function rec(value: string | null, timestamp = 1000n + offset, partition = 0): SampledRecord {
  return {
    partition,
    offset: offset++,
    timestamp,
    key: null,
    value: value === null ? null : new TextEncoder().encode(value),
  };
}

const meta = {
  limits: PREVIEW_DEFAULTS,
  sampledAt: "2026-12-07T00:00:00.000Z",
  slices: [],
  stopped: null,
};

Deno.test("preview: edges of a 64-bit bound above 2^53 are exact", () => {
  offset = 0n;
  const t = target("amount >= 9007199254740993", "amount > 9007199254740993");
  const records = [
    rec('{"order_id":"a","amount":9007199254740992,"qty":1,"card_token":null}'), // 2^53: neither
    rec('{"order_id":"b","amount":9007199254740993,"qty":1,"card_token":null}'), // old only
    rec('{"order_id":"c","amount":9007199254740994,"qty":1,"card_token":null}'), // both
    rec('{"order_id":"d","amount":9223372036854775807,"qty":1,"card_token":null}'), // both
  ];
  const m = evaluateSample(t, records, meta);
  assert.deepEqual(
    [m.sampled, m.admitted_old, m.admitted_new, m.newly_admitted, m.newly_dropped],
    [4, 3, 2, 0, 1],
  );
  // the dropped record is exactly 2^53+1, shown as decimal text (not rounded to 2^53)
  assert.deepEqual(m.examples.newly_dropped.map((e) => e.values.amount), ["9007199254740993"]);
});

Deno.test("preview: NULL under three-valued logic is never admitted, NOT of UNKNOWN neither", () => {
  offset = 0n;
  const t = target("qty > 1", "NOT qty <= 1 OR qty IS NULL");
  const m = evaluateSample(t, [
    rec('{"order_id":"n","amount":1,"qty":null,"card_token":null}'), // old UNKNOWN, new TRUE
    rec('{"order_id":"o","amount":1,"qty":1,"card_token":null}'), // FALSE, FALSE
    rec('{"order_id":"p","amount":1,"qty":2,"card_token":null}'), // TRUE, TRUE
  ], meta);
  assert.deepEqual([m.admitted_old, m.admitted_new, m.newly_admitted, m.newly_dropped], [
    1,
    2,
    1,
    0,
  ]);
  assert.deepEqual(m.examples.newly_admitted.map((e) => e.values.order_id), ["n"]);

  const strict = evaluateSample(target("qty > 1 OR qty IS NULL", "NOT qty <= 1"), [
    rec('{"order_id":"n","amount":1,"qty":null,"card_token":null}'), // TRUE → UNKNOWN: dropped
  ], meta);
  assert.deepEqual([strict.admitted_old, strict.admitted_new, strict.newly_dropped], [1, 0, 1]);
});

Deno.test("preview: undecodable records are counted by the runner's reason, tombstones apart", () => {
  offset = 0n;
  const t = target("amount >= 100", "amount >= 200");
  const m = evaluateSample(t, [
    rec('{"order_id":"x","amount":"150","qty":null,"card_token":null}'),
    rec('{"order_id":"y","amount":1.5,"qty":null,"card_token":null}'),
    rec('{"order_id":"z","qty":null,"card_token":null}'),
    rec("not json"),
    rec('{"order_id":"w","amount":99999999999999999999,"qty":null,"card_token":null}'),
    rec(null),
    rec('{"order_id":"ok","amount":150,"qty":null,"card_token":null}'),
  ], meta);
  assert.equal(m.tombstones, 1);
  assert.equal(m.sampled, 6);
  assert.equal(m.undecodable, 5);
  assert.deepEqual(m.undecodable_by_reason, {
    DECODE_WRONG_TYPE: 2,
    DECODE_MISSING_FIELD: 1,
    DECODE_MALFORMED: 1,
    DECODE_OUT_OF_RANGE: 1,
  });
  assert.equal(m.undecodable_examples.length, 5);
  assert.equal(m.undecodable_examples[2].field, "amount");
  assert.deepEqual([m.admitted_old, m.admitted_new, m.newly_dropped], [1, 0, 1]);
});

Deno.test("preview: a new model admits what its predicate admits; examples are output columns, secrets hidden, at most 5", () => {
  offset = 0n;
  const t = target(null, "amount >= 1");
  const records = Array.from(
    { length: 8 },
    (_, i) => rec(`{"order_id":"o${i}","amount":${i},"qty":7,"card_token":"tok_${i}"}`),
  );
  const m = evaluateSample(t, records, meta);
  assert.deepEqual([m.admitted_old, m.admitted_new, m.newly_admitted], [0, 7, 7]);
  assert.equal(m.examples.newly_admitted.length, 5);
  assert.deepEqual(m.examples.newly_admitted[0], {
    partition: 0,
    offset: "1",
    values: { order_id: "o1", amount: "1", card_token: "<redacted>" },
  });
  assert.doesNotMatch(JSON.stringify(m), /tok_|"qty"/);
  // the sealed summary holds counts only
  assert.doesNotMatch(JSON.stringify(previewSummary(m)), /o1|examples/);
});

Deno.test("preview: the last N records are the most recent across partitions", () => {
  offset = 0n;
  const t = target("amount < 0", "amount >= 0"); // every sampled record flips: all are examples
  const records = [
    rec('{"order_id":"old0","amount":1,"qty":null,"card_token":null}', 10n, 0),
    rec('{"order_id":"new1","amount":1,"qty":null,"card_token":null}', 30n, 1),
    rec('{"order_id":"new0","amount":1,"qty":null,"card_token":null}', 20n, 0),
    rec('{"order_id":"old1","amount":1,"qty":null,"card_token":null}', 5n, 1),
  ];
  const m = evaluateSample(t, records, { ...meta, limits: { ...PREVIEW_DEFAULTS, records: 2 } });
  assert.equal(m.sampled, 2);
  assert.deepEqual(m.examples.newly_admitted.map((e) => e.values.order_id), ["new0", "new1"]);
});
