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
import { emit, emitRunEvent, lineageSink } from "../providers/lineage/emit.ts";
import {
  ERROR_FACET_SCHEMA_FILE,
  LineageSchemaMissing,
  loadRunEventValidator,
  OFFICIAL_SCHEMA_FILE,
  officialSchemaDir,
  SCHEMA_DIR_ENV,
  schemaDirCandidates,
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
    producer: "https://github.com/sluice/sluice/tree/0.2.0",
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

// --- validation against the official schemas (vendored in ../shared/vendor/openlineage) -------

Deno.test("official schemas: START, COMPLETE and FAIL events validate", async () => {
  const validate = await loadRunEventValidator();
  for (const ev of events()) assert.deepEqual(validate(ev), { valid: true, errors: [] });
  // A round trip through JSON (what a sink actually sends) validates too.
  for (const ev of events()) {
    assert.deepEqual(validate(JSON.parse(JSON.stringify(ev))), { valid: true, errors: [] });
  }
  // so do the events without the optional digests, model and environment
  for (const t of TYPES) {
    const ev = buildRunEvent(t, {
      ...CTX,
      environment: null,
      model: null,
      priorArtifactSha256: null,
      desiredArtifactSha256: null,
      planSha256: null,
    });
    assert.deepEqual(validate(ev), { valid: true, errors: [] }, t);
  }
});

Deno.test("official schemas: invalid events are rejected (the validator is not vacuous)", async () => {
  const validate = await loadRunEventValidator();
  const [start, , fail] = events();
  const noRunId = structuredClone(start) as unknown as { run: Record<string, unknown> };
  delete noRunId.run.runId;
  const r = validate(noRunId);
  assert.equal(r.valid, false);
  assert.ok(r.errors.some((e) => /runId/.test(e)), r.errors.join("\n"));
  const bad: Array<[string, (e: Record<string, unknown>) => void, RegExp]> = [
    ["runId not a UUID", (e) => ((e.run as Record<string, unknown>).runId = "op-1"), /runId/],
    ["no job", (e) => delete e.job, /job/],
    ["eventTime not a date-time", (e) => (e.eventTime = "yesterday"), /eventTime/],
    ["producer not a URI", (e) => (e.producer = "not a uri"), /producer/],
    ["no schemaURL", (e) => delete e.schemaURL, /schemaURL/],
    ["unknown eventType", (e) => (e.eventType = "FINISHED"), /eventType/],
    ["job without a namespace", (e) => delete (e.job as Record<string, unknown>).namespace, /job/],
    [
      "dataset without a name",
      (e) => delete (e.inputs as Record<string, unknown>[])[0].name,
      /inputs\/0/,
    ],
    [
      "facet without _producer",
      (e) => delete facetsOf(e).sluice._producer,
      /_producer/,
    ],
  ];
  for (const [what, mutate, where] of bad) {
    const ev = structuredClone(start) as unknown as Record<string, unknown>;
    mutate(ev);
    const v = validate(ev);
    assert.equal(v.valid, false, `${what} must be rejected`);
    assert.ok(v.errors.some((e) => where.test(e)), `${what}: ${v.errors.join("\n")}`);
  }
  // the errorMessage facet is checked against the official ErrorMessageRunFacet schema
  const noLanguage = structuredClone(fail) as unknown as Record<string, unknown>;
  delete facetsOf(noLanguage).errorMessage.programmingLanguage;
  const m = validate(noLanguage);
  assert.equal(m.valid, false);
  assert.ok(m.errors.some((e) => e.startsWith("/run/facets/errorMessage")), m.errors.join("\n"));
  const numericMessage = structuredClone(fail) as unknown as Record<string, unknown>;
  facetsOf(numericMessage).errorMessage.message = 42;
  assert.equal(validate(numericMessage).valid, false);
  // a FAIL event must say what failed
  const silentFail = structuredClone(fail) as unknown as Record<string, unknown>;
  delete facetsOf(silentFail).errorMessage;
  assert.deepEqual(validate(silentFail).errors, [
    "/run/facets a FAIL event must carry the errorMessage facet",
  ]);
  // the sluice facet is checked against sluice's own schema
  const ev = structuredClone(start) as unknown as Record<string, unknown>;
  facetsOf(ev).sluice.planSha256 = "XYZ";
  facetsOf(ev).sluice.unexpected = 1;
  const s = validate(ev);
  assert.equal(s.valid, false);
  assert.ok(s.errors.some((e) => e.startsWith("/run/facets/sluice/planSha256")), s.errors.join());
  assert.ok(s.errors.some((e) => /unexpected/.test(e)), s.errors.join("\n"));
});

function facetsOf(e: Record<string, unknown>): Record<string, Record<string, unknown>> {
  return (e.run as { facets: Record<string, Record<string, unknown>> }).facets;
}

Deno.test("official schemas: their $id are the versions the events name", async () => {
  const dir = officialSchemaDir();
  const schema = JSON.parse(await Deno.readTextFile(`${dir}/${OFFICIAL_SCHEMA_FILE}`));
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(`${schema.$id}#/$defs/RunEvent`, RUN_EVENT_SCHEMA_URL);
  for (const def of ["RunEvent", "Run", "Job", "Dataset", "BaseEvent", "RunFacet"]) {
    assert.ok(def in schema.$defs, `$defs/${def}`);
  }
  const facet = JSON.parse(await Deno.readTextFile(`${dir}/${ERROR_FACET_SCHEMA_FILE}`));
  assert.equal(facet.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(`${facet.$id}#/$defs/ErrorMessageRunFacet`, ERROR_MESSAGE_FACET_SCHEMA_URL);
});

Deno.test("schema directory: resolved beside the repository, a missing one is a clear failure", async () => {
  const candidates = schemaDirCandidates();
  assert.ok(candidates.length >= 1);
  assert.ok(
    candidates.every((c) =>
      c.endsWith("/shared/vendor/openlineage") || c === Deno.env.get(SCHEMA_DIR_ENV)
    ),
    candidates.join("\n"),
  );
  const missing = `${await Deno.makeTempDir()}/no-such-dir`;
  await assert.rejects(() => loadRunEventValidator(missing), (e: unknown) => {
    assert.ok(e instanceof LineageSchemaMissing);
    assert.match(e.message, /no-such-dir/);
    return true;
  });
  // an override naming a missing directory is never passed over for another candidate
  const before = Deno.env.get(SCHEMA_DIR_ENV);
  Deno.env.set(SCHEMA_DIR_ENV, missing);
  try {
    assert.throws(() => officialSchemaDir(), LineageSchemaMissing);
  } finally {
    if (before === undefined) Deno.env.delete(SCHEMA_DIR_ENV);
    else Deno.env.set(SCHEMA_DIR_ENV, before);
  }
  // a directory without the schema files is reported by file name
  const empty = await Deno.makeTempDir();
  await assert.rejects(() => loadRunEventValidator(empty), /OpenLineage\.json/);
  await Deno.remove(empty);
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
    const r = await emit(sink, events()[2]);
    assert.equal(r.delivered, false);
    assert.match(r.warning!, /timed out$/);
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
