import assert from "node:assert/strict";
import {
  buildRunEvent,
  ERROR_MESSAGE_FACET_SCHEMA_URL,
  jobNamespace,
  kafkaNamespace,
  RUN_EVENT_SCHEMA_URL,
  SLUICE_FACET_SCHEMA_URL,
  SLUICE_PRODUCER,
} from "./events.ts";
import type { LineageContext, LineageEventType, RunEvent } from "./events.ts";
import { emit, emitRunEvent, lineageSink } from "./emit.ts";
import {
  LineageSchemaMissing,
  loadRunEventValidator,
  OFFICIAL_SCHEMA_PATH,
  officialSchemaPresent,
} from "./validate.ts";

const OP = "0b6f2f8e-4c1d-4d1a-9a43-6f0f3c2d9e11";
const SHA_A = "a".repeat(64);
const SHA_B = "b".repeat(64);
const SHA_P = "c".repeat(64);
const CTX: LineageContext = {
  operationId: OP,
  project: "orders",
  environment: "prod",
  applicationId: "sluice-orders-big_orders",
  bootstrap: "kafka:9092,kafka2:9092",
  inputTopic: "orders",
  outputTopic: "big_orders",
  model: "big_orders",
  priorArtifactSha256: SHA_A,
  desiredArtifactSha256: SHA_B,
  planSha256: SHA_P,
};
const AT = new Date("2026-11-29T12:00:00.000Z");
const TYPES: LineageEventType[] = ["START", "COMPLETE", "FAIL"];

function events(): RunEvent[] {
  return TYPES.map((t) =>
    buildRunEvent(t, CTX, {
      eventTime: AT,
      failure: t === "FAIL" ? { message: "candidate not ready in time", outcome: "timeout" } : null,
    })
  );
}

const OFFICIAL = await officialSchemaPresent();
const NEEDS_OFFICIAL = OFFICIAL ? "" : " [ignored: lib/lineage/schema/OpenLineage.json is absent]";

// --- events ---------------------------------------------------------------------------------

Deno.test("buildRunEvent: run = operation UUID, job = application, datasets = Kafka topics", () => {
  const [start, complete, fail] = events();
  assert.deepEqual(start, {
    eventType: "START",
    eventTime: "2026-11-29T12:00:00.000Z",
    run: {
      runId: OP,
      facets: {
        sluice: {
          _producer: SLUICE_PRODUCER,
          _schemaURL: SLUICE_FACET_SCHEMA_URL,
          operation: "predicate_replacement",
          operationId: OP,
          project: "orders",
          environment: "prod",
          applicationId: "sluice-orders-big_orders",
          model: "big_orders",
          priorArtifactSha256: SHA_A,
          desiredArtifactSha256: SHA_B,
          planSha256: SHA_P,
        },
      },
    },
    job: { namespace: "sluice://orders/prod", name: "sluice-orders-big_orders" },
    inputs: [{ namespace: "kafka://kafka:9092", name: "orders" }],
    outputs: [{ namespace: "kafka://kafka:9092", name: "big_orders" }],
    producer: "https://github.com/sluice/sluice/tree/0.1.0",
    schemaURL: "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
  });
  assert.equal(complete.eventType, "COMPLETE");
  assert.equal(complete.run.facets?.errorMessage, undefined);
  assert.equal(fail.eventType, "FAIL");
  assert.deepEqual(fail.run.facets?.errorMessage, {
    _producer: SLUICE_PRODUCER,
    _schemaURL: ERROR_MESSAGE_FACET_SCHEMA_URL,
    message: "candidate not ready in time",
    programmingLanguage: "TypeScript",
  });
  assert.equal(fail.run.facets?.sluice.outcome, "timeout");
});

Deno.test("buildRunEvent: eventTime defaults to now, ISO 8601 UTC", () => {
  const before = Date.now();
  const ev = buildRunEvent("START", CTX);
  assert.match(ev.eventTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const t = Date.parse(ev.eventTime);
  assert.ok(t >= before && t <= Date.now());
});

Deno.test("buildRunEvent: optional digests are left out, FAIL gets a default message", () => {
  const ev = buildRunEvent("FAIL", {
    ...CTX,
    environment: null,
    model: null,
    priorArtifactSha256: null,
    desiredArtifactSha256: undefined,
    planSha256: null,
  });
  assert.equal(ev.job.namespace, "sluice://orders");
  assert.deepEqual(Object.keys(ev.run.facets!.sluice).sort(), [
    "_producer",
    "_schemaURL",
    "applicationId",
    "environment",
    "operation",
    "operationId",
    "project",
  ]);
  assert.equal(ev.run.facets!.errorMessage.message, "predicate replacement failed");
});

Deno.test("namespaces: sluice://project[/env] and kafka://<first bootstrap server>", () => {
  assert.equal(jobNamespace("p", null), "sluice://p");
  assert.equal(jobNamespace("p", "staging"), "sluice://p/staging");
  assert.equal(kafkaNamespace("broker:9092"), "kafka://broker:9092");
  assert.equal(kafkaNamespace(" a:1 , b:2"), "kafka://a:1");
  assert.equal(kafkaNamespace("PLAINTEXT://a:1,b:2"), "kafka://a:1");
  assert.throws(() => kafkaNamespace(" , "), /empty Kafka bootstrap/);
});

// --- validation against the official schema ---------------------------------------------------

Deno.test({
  name: `official schema: START, COMPLETE and FAIL events validate${NEEDS_OFFICIAL}`,
  ignore: !OFFICIAL,
  fn: async () => {
    const validate = await loadRunEventValidator();
    for (const ev of events()) assert.deepEqual(validate(ev), { valid: true, errors: [] });
    // A round trip through JSON (what a sink actually sends) validates too.
    for (const ev of events()) assert.ok(validate(JSON.parse(JSON.stringify(ev))).valid);
  },
});

Deno.test({
  name:
    `official schema: invalid events are rejected (the validator is not vacuous)${NEEDS_OFFICIAL}`,
  ignore: !OFFICIAL,
  fn: async () => {
    const validate = await loadRunEventValidator();
    const good = events()[0];
    const noRunId = structuredClone(good) as unknown as { run: Record<string, unknown> };
    delete noRunId.run.runId;
    const r = validate(noRunId);
    assert.equal(r.valid, false);
    assert.ok(r.errors.some((e) => /runId/.test(e)), r.errors.join("\n"));
    const bad: Array<[string, (e: Record<string, unknown>) => void]> = [
      ["runId not a UUID", (e) => ((e.run as Record<string, unknown>).runId = "op-1")],
      ["no job", (e) => delete e.job],
      ["eventTime not a date-time", (e) => (e.eventTime = "yesterday")],
      ["producer not a URI", (e) => (e.producer = "not a uri")],
      ["unknown eventType", (e) => (e.eventType = "FINISHED")],
      ["dataset without a name", (e) => delete (e.inputs as Record<string, unknown>[])[0].name],
    ];
    for (const [what, mutate] of bad) {
      const ev = structuredClone(good) as unknown as Record<string, unknown>;
      mutate(ev);
      assert.equal(validate(ev).valid, false, `${what} must be rejected`);
    }
  },
});

Deno.test({
  name: `official schema: its $id is the spec version the events name${NEEDS_OFFICIAL}`,
  ignore: !OFFICIAL,
  fn: async () => {
    const schema = JSON.parse(await Deno.readTextFile(OFFICIAL_SCHEMA_PATH));
    assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
    assert.equal(`${schema.$id}#/$defs/RunEvent`, RUN_EVENT_SCHEMA_URL);
    for (const def of ["RunEvent", "Run", "Job", "Dataset", "BaseEvent"]) {
      assert.ok(def in schema.$defs, `$defs/${def}`);
    }
  },
});

Deno.test("validator: a missing official schema is reported, never replaced", async () => {
  const missing = new URL("./schema/does-not-exist.json", import.meta.url);
  await assert.rejects(() => loadRunEventValidator(missing), LineageSchemaMissing);
  assert.equal(await officialSchemaPresent(missing), false);
});

Deno.test("validator mechanics (test fixture, not the official schema): $defs/RunEvent, formats and the sluice facet", async () => {
  // A deliberately tiny 2020-12 schema, only to exercise the loader when the official file is
  // absent: it resolves `<$id>#/$defs/RunEvent`, checks formats, and checks the sluice facet.
  const dir = await Deno.makeTempDir();
  try {
    const fixture = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://example.invalid/fixture/RunEventFixture.json",
      $defs: {
        RunEvent: {
          type: "object",
          properties: {
            eventTime: { type: "string", format: "date-time" },
            run: {
              type: "object",
              properties: { runId: { type: "string", format: "uuid" } },
              required: ["runId"],
            },
          },
          required: ["eventTime", "run"],
        },
      },
    };
    const path = new URL(`file://${dir}/fixture.json`);
    await Deno.writeTextFile(path, JSON.stringify(fixture));
    const validate = await loadRunEventValidator(path);
    for (const ev of events()) assert.deepEqual(validate(ev), { valid: true, errors: [] });
    const ev = structuredClone(events()[0]) as unknown as {
      eventTime: string;
      run: { runId?: string; facets: { sluice: Record<string, unknown> } };
    };
    ev.eventTime = "not a time";
    delete ev.run.runId;
    ev.run.facets.sluice.planSha256 = "XYZ";
    ev.run.facets.sluice.unexpected = 1;
    const r = validate(ev);
    assert.equal(r.valid, false);
    assert.equal(r.errors.length, 4, r.errors.join("\n"));
    assert.ok(r.errors.some((e) => e.startsWith("/eventTime")));
    assert.ok(r.errors.some((e) => e.startsWith("/run ") && /runId/.test(e)));
    assert.ok(r.errors.some((e) => e.startsWith("/run/facets/sluice/planSha256")));
    assert.ok(r.errors.some((e) => /unexpected/.test(e)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// --- sinks --------------------------------------------------------------------------------------

Deno.test("lineageSink: http(s) URLs are endpoints, everything else is a file", () => {
  assert.deepEqual(lineageSink("http://127.0.0.1:5000/api/v1/lineage"), {
    kind: "http",
    url: "http://127.0.0.1:5000/api/v1/lineage",
    timeoutMs: 5000,
  });
  assert.deepEqual(lineageSink("HTTPS://lineage.example/api", { timeoutMs: 100 }), {
    kind: "http",
    url: "HTTPS://lineage.example/api",
    timeoutMs: 100,
  });
  assert.deepEqual(lineageSink("out/lineage.jsonl"), { kind: "file", path: "out/lineage.jsonl" });
  assert.deepEqual(lineageSink("file:///tmp/a%20b.jsonl"), {
    kind: "file",
    path: "/tmp/a b.jsonl",
  });
  assert.throws(() => lineageSink(" "), /empty/);
});

Deno.test("file sink: appends exactly one JSON line per event, keeping what was there", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/lineage.jsonl`;
    await Deno.writeTextFile(path, '{"earlier":true}\n');
    const sink = lineageSink(path);
    const evs = events();
    for (const ev of evs) {
      assert.deepEqual(await emit(sink, ev), { delivered: true, warning: null });
    }
    const text = await Deno.readTextFile(path);
    assert.equal(text, '{"earlier":true}\n' + evs.map((e) => JSON.stringify(e) + "\n").join(""));
    const lines = text.trimEnd().split("\n").slice(1).map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.eventType), ["START", "COMPLETE", "FAIL"]);
    assert.ok(lines.every((l) => l.run.runId === OP));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("file sink: an unwritable path is a warning, not a throw", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await emit(lineageSink(`${dir}/missing/dir/lineage.jsonl`), events()[0]);
    assert.equal(r.delivered, false);
    assert.match(r.warning!, /^OpenLineage event not delivered \(file .*missing\/dir/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HTTP sink: a local endpoint receives each event as a JSON POST", async () => {
  const received: Array<{ method: string; type: string | null; body: unknown }> = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      received.push({
        method: req.method,
        type: req.headers.get("content-type"),
        body: await req.json(),
      });
      return new Response(null, { status: 201 });
    },
  );
  try {
    const sink = lineageSink(`http://127.0.0.1:${server.addr.port}/api/v1/lineage`);
    const evs = events();
    for (const ev of evs) {
      assert.deepEqual(await emit(sink, ev), { delivered: true, warning: null });
    }
    assert.deepEqual(
      received,
      evs.map((e) => ({
        method: "POST",
        type: "application/json",
        body: JSON.parse(JSON.stringify(e)),
      })),
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("HTTP sink: a non-2xx answer is a warning naming the status", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("bad event", { status: 422 }),
  );
  try {
    const r = await emitRunEvent(
      lineageSink(`http://127.0.0.1:${server.addr.port}/`),
      "START",
      CTX,
    );
    assert.equal(r.delivered, false);
    assert.match(r.warning!, /POST http:\/\/127\.0\.0\.1:\d+\/\): HTTP 422: bad event$/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("HTTP sink: an unreachable endpoint (closed port) is a warning, not a throw", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const r = await emit(lineageSink(`http://127.0.0.1:${port}/api/v1/lineage`), events()[1]);
  assert.equal(r.delivered, false);
  assert.match(r.warning!, /^OpenLineage event not delivered \(POST http:\/\/127\.0\.0\.1:\d+/);
});

Deno.test("HTTP sink: a silent endpoint times out into a warning", async () => {
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async () => {
      await hold;
      return new Response(null, { status: 200 });
    },
  );
  try {
    const sink = lineageSink(`http://127.0.0.1:${server.addr.port}/`, { timeoutMs: 200 });
    const t0 = Date.now();
    const r = await emit(sink, events()[2]);
    assert.equal(r.delivered, false);
    assert.match(r.warning!, /timed out$/);
    assert.ok(Date.now() - t0 < 3000);
  } finally {
    release();
    await server.shutdown();
  }
});

Deno.test("emitRunEvent: a build error is a warning too", async () => {
  const r = await emitRunEvent(lineageSink("/dev/null"), "START", { ...CTX, bootstrap: "" });
  assert.deepEqual(r, {
    delivered: false,
    warning: "OpenLineage START event not built: lineage: empty Kafka bootstrap server list",
  });
});
