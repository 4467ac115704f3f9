// test-needs: env
// Needs: Docker, the broker, PostgreSQL, the runner image (shared environment from tools/test.ts).
// Day two against the real runner and broker, with local state, through `bin/sluice`, on one
// deployed project, the journeys in sequence:
//
// 1. stopped by someone else (`docker stop`, exit 143): plan is BLOCKED_RUNNER_NOT_RUNNING;
//    `sluice restart` brings the same container (same generation, same volume) back, recorded in
//    the audit first; records produced while it was stopped are processed exactly once; running
//    it again changes nothing; plan is a no-op again;
// 2. killed (`docker kill`, 137): the same, once the dead member left the group;
// 3. a record the runner cannot decode stops it (exit 13); `sluice skip-record` with the
//    coordinates `sluice status` shows records the skip (the record's coordinates and the reason),
//    moves exactly that partition by one and starts the runner again: the records after it are
//    processed, the bad one never;
// 4. started again by hand afterwards, it is drift: plan is BLOCKED_RUNNER_DRIFT, status FAIL.
//
// Every invariant is read by independent means: the committed offsets through the Kafka admin API,
// the container, its generation label and its volume's instance label through Docker, the output
// topic's exact records (sorted by key: a lost record is missing, a duplicate is an extra), the
// audit through the state store.
import assert from "node:assert/strict";
import { dockerCli } from "../harness/docker.ts";
import { sharedEnv } from "../harness/env.ts";
import { committedOffsets, produce, readAll } from "../harness/kafka.ts";
import type { TestProject } from "../harness/project.ts";
import { LABEL, volumeName } from "../lib/runtime/labels.ts";
import type { RestartResult } from "../lib/runtime/restart.ts";
import type { SkipRecordResult } from "../lib/runtime/skip_record.ts";
import type { StateStore } from "../lib/state/store.ts";
import {
  assertExit,
  caughtUp,
  containersOf,
  dropPgState,
  expectedStarterOutput,
  outputRecords,
  removeApplication,
  type Sample,
  samplesOf,
  sluice,
  sluiceJson,
  starterOn,
  type StateBackend,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const MODEL = "eligible_orders";
const REASON = "stopped outside sluice during maintenance";
const SKIP_REASON = "a test order with a text amount";
const PARTS = [0, 1, 2];

/** One deployed starter project and what the journeys share. */
interface Deployed {
  backend: StateBackend;
  project: TestProject;
  bootstrap: string;
  vars: Record<string, string>;
  appId: string;
  store: StateStore;
  /** The one container of the application (Docker's full ID). */
  container: string;
  /** Its generation label and its volume's instance label, as Docker shows them after apply. */
  generation: string;
  volumeInstance: string;
  /** Every good record produced so far (the output must be exactly theirs). */
  sent: Sample[];
  /** The starter's samples, renamed per batch so that every key is produced once. */
  batch(name: string): Sample[];
}

/** Progress of a long journey, to a file (a hung step shows where it is). */
function step(text: string): void {
  const log = Deno.env.get("SLUICE_DAY_TWO_TRACE");
  if (log) Deno.writeTextFileSync(log, `${new Date().toISOString()} ${text}\n`, { append: true });
}

async function docker(args: string[]): Promise<string> {
  const out = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, `docker ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout).trim();
}

const inspect = (format: string, id: string) => docker(["inspect", "-f", format, id]);

/** Committed offsets of the group, through the Kafka admin API, as decimal strings. */
async function committedNow(d: Deployed): Promise<Record<string, string>> {
  const c = await committedOffsets(d.bootstrap, d.appId, d.project.inputTopic);
  return Object.fromEntries([...c].map(([k, v]) => [String(k), String(v)]));
}

async function send(d: Deployed, records: Sample[]): Promise<void> {
  await produce(
    d.bootstrap,
    d.project.inputTopic,
    records.map((s) => ({ key: s.key, value: JSON.stringify(s.value) })),
  );
}

/**
 * The output topic holds exactly the records passing the filter of every good record sent, each
 * once, and the group committed every input record (nothing lost, nothing duplicated).
 */
async function assertExactOutput(d: Deployed): Promise<void> {
  const expected = expectedStarterOutput(d.sent);
  await outputRecords(d.bootstrap, d.project.outputTopic, expected.length);
  await caughtUp(d.bootstrap, d.appId, d.project.inputTopic, PARTS);
  // read once more after the group committed everything: a duplicate would show as an extra
  const now = (await readAll(d.bootstrap, d.project.outputTopic, { partitions: PARTS }))
    .map((r) => ({ key: r.key, value: JSON.parse(r.value!) }))
    .sort((a, b) => (a.key ?? "").localeCompare(b.key ?? ""));
  assert.deepEqual(now, expected);
}

/** The container's generation label and its state volume's instance label, as Docker shows them. */
async function identityOf(appId: string, container: string) {
  return {
    generation: await inspect(`{{index .Config.Labels "${LABEL.generation}"}}`, container),
    volumeInstance: await docker([
      "volume",
      "inspect",
      "-f",
      `{{index .Labels "${LABEL.volumeInstance}"}}`,
      volumeName(appId),
    ]),
  };
}

/** The same container, the same generation, the same volume instance, running, the only one. */
async function assertSameGeneration(d: Deployed): Promise<void> {
  assert.deepEqual(await containersOf(d.appId), [d.container], "exactly the one container");
  assert.equal(await inspect("{{.State.Running}}", d.container), "true");
  assert.deepEqual(await identityOf(d.appId, d.container), {
    generation: d.generation,
    volumeInstance: d.volumeInstance,
  });
}

async function assertPlanNoop(d: Deployed): Promise<void> {
  const noop = await sluiceJson(["plan", "--project", d.project.dir], d.vars);
  assertExit(noop, 0);
  assert.equal(noop.envelope.data?.noop, true);
}

/** A starter project for `backend`, not deployed yet (nothing outside its directory exists). */
async function prepare(backend: StateBackend): Promise<Deployed> {
  const env = await sharedEnv();
  const { project, vars, store, applicationId } = await starterOn(env, backend);
  const samples = await samplesOf(project.dir);
  return {
    backend,
    project,
    bootstrap: env.bootstrapHost,
    vars,
    appId: applicationId,
    store,
    container: "",
    generation: "",
    volumeInstance: "",
    sent: [],
    batch: (name) =>
      samples.map((s) => ({
        key: `${name}-${s.key}`,
        value: { ...s.value, order_id: `${name}-${s.value.order_id}` },
      })),
  };
}

/** `sluice plan --out` and `apply --plan`; the first records are processed before anything else. */
async function deploy(d: Deployed): Promise<void> {
  const { dir } = d.project;
  const planFile = `${dir}/plan.json`;
  assertExit(await sluice(["plan", "--project", dir, "--out", planFile], d.vars), 0);
  assertExit(await sluice(["apply", "--project", dir, "--plan", planFile], d.vars), 0);
  await d.store.init();
  const ids = await containersOf(d.appId);
  assert.equal(ids.length, 1, "apply created exactly one container");
  d.container = ids[0];
  Object.assign(d, await identityOf(d.appId, d.container));
  assert.notEqual(d.generation, "");
  assert.notEqual(d.volumeInstance, "");
  // the first records, processed before anyone stops anything
  const first = d.batch("first");
  await send(d, first);
  d.sent.push(...first);
  await assertExactOutput(d);
  step(`${d.backend}: applied, first output read`);
}

async function teardown(d: Deployed, pgUrl: string): Promise<void> {
  await d.store.close();
  await removeApplication(d.appId);
  if (d.backend === "postgres") await dropPgState(pgUrl, d.project.name);
  await Deno.remove(d.project.dir, { recursive: true });
}

/** Someone else stops (TERM, 143) or kills (137) the runner; `sluice restart` brings it back. */
async function restartAfter(d: Deployed, how: "stop" | "kill"): Promise<void> {
  await docker(how === "stop" ? ["stop", "-t", "30", d.container] : ["kill", d.container]);
  assert.equal(await inspect("{{.State.ExitCode}}", d.container), how === "stop" ? "143" : "137");
  // records arrive while it is stopped
  const later = d.batch(how);
  await send(d, later);
  d.sent.push(...later);
  const blocked = await sluiceJson(["plan", "--project", d.project.dir], d.vars);
  assertExit(blocked, 4);
  assert.equal(blocked.envelope.errors[0].code, "BLOCKED_RUNNER_NOT_RUNNING");
  const before = (await d.store.load()).history.events.length;
  // nothing consumes while it is stopped: what the audit must record
  const committed = await committedNow(d);
  step(`${d.backend} ${how}: stopped and blocked`);

  // sluice brings it back: the same container, recorded first
  const args = ["restart", MODEL, "--project", d.project.dir, "--reason", REASON];
  const r = await sluiceJson(args, d.vars);
  assertExit(r, 0);
  const data = r.envelope.data as unknown as RestartResult;
  assert.equal(data.container_id, d.container, "the same container: the same generation");
  assert.equal(data.generation, d.generation);
  assert.equal(data.stop.exit_code, how === "stop" ? 143 : 137);
  assert.equal(data.stop.killed, how === "kill");
  assert.equal(data.stop.runner_reason, how === "stop" ? "SIGTERM" : null);
  assert.equal(data.recorded_now, true);
  assert.equal(data.started_now, true);
  assert.deepEqual(data.committed, committed);
  await assertSameGeneration(d);
  const snap = await d.store.load();
  assert.equal(snap.history.events.length, before + 1);
  const e = snap.history.events.at(-1)!;
  assert.ok(e.kind === "runner_restarted", e.kind);
  assert.equal(e.event_id, data.event_id);
  assert.equal(e.reason, REASON);
  assert.equal(e.model, MODEL);
  assert.equal(e.application_id, d.appId);
  assert.equal(e.container.id, d.container);
  assert.equal(e.container.generation, d.generation);
  assert.equal(e.container.volume_instance, d.volumeInstance);
  assert.equal(e.container.exit_code, data.stop.exit_code);
  assert.equal(e.container.finished_at, data.stop.finished_at);
  assert.equal(e.group_state, "Empty");
  assert.deepEqual(e.committed, committed, "the audit records the offsets Kafka reports");
  assert.equal(e.after_skip, null);
  assert.equal(snap.ownership?.document.serial, 1, "a restart changes no owner");
  step(`${d.backend} ${how}: restarted`);

  // everything is processed exactly once: what came before, and what arrived while stopped
  await assertExactOutput(d);

  // the same command again changes nothing; the project plans as a no-op
  const again = await sluiceJson(args, d.vars);
  assertExit(again, 0);
  const second = again.envelope.data as unknown as RestartResult;
  assert.equal(second.event_id, data.event_id);
  assert.equal(second.recorded_now, false);
  assert.equal(second.started_now, false);
  assert.equal((await d.store.load()).history.events.length, before + 1);
  await assertSameGeneration(d);
  await assertPlanNoop(d);
}

type StatusRow = {
  stop: {
    exit_code: number;
    runner:
      | { reason: string; record: { topic: string; partition: number; offset: number } | null }
      | null;
  } | null;
};

/** A record the runner cannot decode stops it; `sluice skip-record` moves past exactly it. */
async function skipPoisonRecord(d: Deployed): Promise<void> {
  const dir = d.project.dir;
  const secret = "not-to-be-shown-4111";
  // the bad record (amount is a string), then good records after it on every partition
  await produce(d.bootstrap, d.project.inputTopic, [{
    key: "bad-1",
    value: JSON.stringify({ order_id: secret, amount: "lots", paid: true, customer: null }),
  }]);
  const after = d.batch("skip");
  await send(d, after);
  d.sent.push(...after);
  for (let i = 0; i < 200; i++) {
    if (await inspect("{{.State.Running}}", d.container) === "false") break;
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.equal(await inspect("{{.State.ExitCode}}", d.container), "13");
  step(`${d.backend} skip: stopped on the poison record`);

  // the operator reads the coordinates from status, as the runbook says
  const status = await sluiceJson(["status", "--project", dir], d.vars);
  const row = (status.envelope.data?.models as StatusRow[])[0];
  const rec = row.stop?.runner?.record;
  assert.ok(rec, "status names the record");
  assert.equal(rec.topic, d.project.inputTopic);
  assert.equal(row.stop?.runner?.reason, "DECODE_WRONG_TYPE");
  const restartFirst = await sluiceJson(
    ["restart", MODEL, "--project", dir, "--reason", REASON],
    d.vars,
  );
  assertExit(restartFirst, 4);
  assert.equal(restartFirst.envelope.errors[0].code, "BLOCKED_POISON_RECORD");
  const skip = (offset: number) => [
    "skip-record",
    MODEL,
    "--project",
    dir,
    "--partition",
    String(rec.partition),
    "--offset",
    String(offset),
    "--reason",
    SKIP_REASON,
  ];
  const wrong = await sluiceJson(skip(rec.offset + 1), d.vars);
  assertExit(wrong, 4);
  assert.equal(wrong.envelope.errors[0].code, "BLOCKED_SKIP_MISMATCH");

  const before = (await d.store.load()).history.events.length;
  const committedBefore = await committedNow(d);
  assert.equal(committedBefore[rec.partition], String(rec.offset), "stopped at the record");
  const r = await sluiceJson(skip(rec.offset), d.vars);
  assertExit(r, 0);
  assert.ok(!JSON.stringify(r.envelope).includes(secret), "no value of the record is shown");
  const data = r.envelope.data as unknown as SkipRecordResult;
  const coordinates = {
    topic: d.project.inputTopic,
    partition: rec.partition,
    offset: String(rec.offset),
  };
  assert.deepEqual(data.record, coordinates);
  assert.equal(data.recorded_now, true);
  assert.equal(data.moved_now, true);
  assert.equal(data.restart.after_skip, data.event_id);
  assert.equal(data.restart.container_id, d.container);

  // the audit: the skip with the record's coordinates and the reason, then the restart, which
  // found exactly that partition moved by one and every other where Kafka had it before
  const events = (await d.store.load()).history.events.slice(before);
  assert.deepEqual(events.map((e) => e.kind), ["record_skipped", "runner_restarted"]);
  const [skipped, restarted] = events;
  assert.ok(skipped.kind === "record_skipped" && restarted.kind === "runner_restarted");
  assert.equal(skipped.event_id, data.event_id);
  assert.deepEqual(skipped.record, coordinates);
  assert.equal(skipped.reason, SKIP_REASON);
  assert.equal(skipped.failure.reason, "DECODE_WRONG_TYPE");
  assert.equal(skipped.container.id, d.container);
  assert.equal(skipped.container.exit_code, 13);
  assert.equal(restarted.after_skip, skipped.event_id);
  assert.deepEqual(restarted.committed, {
    ...committedBefore,
    [rec.partition]: String(rec.offset + 1),
  });
  assert.ok(!JSON.stringify(events).includes(secret), "no value of the record is recorded");
  await assertSameGeneration(d);
  step(`${d.backend} skip: skipped and restarted`);

  // every good record is processed exactly once; the bad record is never output; the group
  // committed every input record, the bad one included
  await assertExactOutput(d);

  // the same command again: done, nothing recorded or moved
  const again = await sluiceJson(skip(rec.offset), d.vars);
  assertExit(again, 0);
  const second = again.envelope.data as unknown as SkipRecordResult;
  assert.equal(second.event_id, data.event_id);
  assert.equal(second.recorded_now, false);
  assert.equal(second.moved_now, false);
  assert.equal((await d.store.load()).history.events.length, before + 2);
  await assertPlanNoop(d);
}

/** Stopped and started again by hand, on the real daemon's clock: drift. */
async function startedByHand(d: Deployed): Promise<void> {
  await docker(["stop", "-t", "30", d.container]);
  await docker(["start", d.container]);
  const drifted = await sluiceJson(["plan", "--project", d.project.dir], d.vars);
  assertExit(drifted, 4);
  assert.equal(drifted.envelope.errors[0].code, "BLOCKED_RUNNER_DRIFT");
  const status = await sluiceJson(["status", "--project", d.project.dir], d.vars);
  const row = (status.envelope.data?.models as Array<
    { healthy: boolean; drift: { kind: string; container_id: string } | null }
  >)[0];
  assert.equal(row.healthy, false);
  assert.equal(row.drift?.kind, "started_outside_sluice");
  assert.equal(row.drift?.container_id, d.container);
}

/** The journeys in sequence, each from the state the previous one left. */
const JOURNEYS: Array<[string, (d: Deployed) => Promise<void>]> = [
  [
    "restart after docker stop (143): the same container back, audited, exact output",
    (d) => restartAfter(d, "stop"),
  ],
  [
    "restart after docker kill (137): waits for the dead member, audited, exact output",
    (d) => restartAfter(d, "kill"),
  ],
  [
    "skip-record past a record the runner cannot decode (exit 13): audited, one partition moved by one, exact output",
    skipPoisonRecord,
  ],
  ["started again by hand: BLOCKED_RUNNER_DRIFT, status FAIL", startedByHand],
];

// One backend: what day two changes is read from real Docker and Kafka, and the state backend
// only records it — both backends' day-two journeys run over the fakes (lib/runtime/day_two_test.ts,
// restart_test.ts, skip_record_test.ts, the crash sweep) and in the fault matrix's day-two cases
// (probes/catalogue.ts, SUITE_MATRIX).
Deno.test(
  "day two on the local state backend: restart after docker stop (143) and after docker kill (137), skip-record past a poison record (13), then drift — audited, exact offsets and output",
  opts,
  async (t) => {
    const env = await sharedEnv();
    const d = await prepare("local");
    try {
      await deploy(d);
      // stop at the first failure: the next journey would start from a state it does not know
      for (const [name, journey] of JOURNEYS) {
        if (!await t.step({ name, ...opts, fn: () => journey(d) })) break;
      }
    } finally {
      await teardown(d, env.pgUrl);
    }
  },
);
