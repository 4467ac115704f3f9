/**
 * Helpers of the deployment integration tests: run the real `bin/sluice` launcher, compute
 * the starter's exact expected output, read the runner's output, and remove what a
 * CLI-driven apply created (its containers and volume carry the application-ID label, not
 * the test run's label).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import pg from "pg";
import { docker, removeLabelled } from "../harness/docker.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import { committedOffsets, offsetRange, produce, readAll } from "../harness/kafka.ts";
import { runnerImageId, starterProject, type TestProject } from "../harness/project.ts";
import { FAULT_ENV, type FaultSide } from "../lib/fault/site.ts";
import {
  OPERATION_WRITES,
  REPLACEMENT_SITES,
  REPLACEMENT_TABLE,
} from "../lib/protocol/replacement.ts";
import { tableSites } from "../lib/protocol/table.ts";
import { openStateStore } from "../lib/state/open.ts";
import type { StateStore } from "../lib/state/store.ts";
import { seeded } from "../testing/seeded.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** What one `bin/sluice` invocation returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `bin/sluice ARGS` with extra environment variables. */
export async function sluice(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const out = await new Deno.Command(`${ROOT}bin/sluice`, {
    args,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The `-o json` envelope. */
export interface Envelope {
  ok: boolean;
  command: string;
  data: Record<string, unknown> | null;
  errors: Array<{ code: string; message: string; evidence?: Record<string, unknown> }>;
}

/** Run `bin/sluice -o json ARGS` and parse its one JSON document. */
export async function sluiceJson(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; envelope: Envelope; stdout: string; stderr: string }> {
  const r = await sluice(["-o", "json", ...args], env);
  let envelope: Envelope;
  try {
    envelope = JSON.parse(r.stdout);
  } catch {
    assert.fail(`sluice ${args.join(" ")}: stdout is not JSON:\n${r.stdout}\n${r.stderr}`);
  }
  // stdout kept so that assertExit shows the envelope of an unexpected exit
  return { code: r.code, envelope, stdout: r.stdout, stderr: r.stderr };
}

/** Assert a CLI run exited with `code`, showing its output when it did not. */
export function assertExit(run: CliRun | { code: number; stderr: string }, code: number) {
  const out = "stdout" in run ? run.stdout : "";
  assert.equal(run.code, code, `exit ${run.code} (expected ${code})\n${out}\n${run.stderr}`);
}

/** A sample record of the starter. */
export interface Sample {
  key: string;
  value: Record<string, unknown>;
}

/** The starter's sample records. */
export async function samplesOf(dir: string): Promise<Sample[]> {
  const text = await Deno.readTextFile(`${dir}/samples/raw_orders.jsonl`);
  return text.trim().split("\n").map((l) => JSON.parse(l) as Sample);
}

/**
 * The exact output the starter's model gives for `samples`: `amount >= 100 AND paid = TRUE`,
 * projected to order_id, amount, paid, keys unchanged; sorted by key.
 */
export function expectedStarterOutput(samples: Sample[]): Array<{ key: string; value: unknown }> {
  return samples
    .filter((s) => (s.value.amount as number) >= 100 && s.value.paid === true)
    .map((s) => ({
      key: s.key,
      value: { order_id: s.value.order_id, amount: s.value.amount, paid: s.value.paid },
    }))
    .sort(byKey);
}

function byKey(a: { key: string | null }, b: { key: string | null }): number {
  return (a.key ?? "").localeCompare(b.key ?? "");
}

/**
 * Read `topic` until it holds `count` records (bounded by attempts, not by a clock
 * assertion), sorted by key, values parsed as JSON.
 */
export async function outputRecords(
  bootstrap: string,
  topic: string,
  count: number,
  partitions = [0, 1, 2],
): Promise<Array<{ key: string | null; value: unknown }>> {
  let got: Array<{ key: string | null; value: unknown }> = [];
  for (let i = 0; i < 200 && got.length < count; i++) {
    got = (await readAll(bootstrap, topic, { partitions }))
      .map((r) => ({ key: r.key, value: JSON.parse(r.value!) }));
    if (got.length < count) await new Promise((r) => setTimeout(r, 300));
  }
  return got.sort(byKey);
}

/** An order of the starter's source schema. */
export type Order = { order_id: string; amount: number; paid: boolean; customer: string | null };

/** Orders keyed `prefix-i` with the given amounts; every fourth one unpaid. */
export function orders(prefix: string, amounts: number[]): Array<{ key: string; value: Order }> {
  return amounts.map((amount, i) => ({
    key: `${prefix}-${i}`,
    value: { order_id: `${prefix}-${i}`, amount, paid: i % 4 !== 3, customer: null },
  }));
}

/** What the starter's runner emits for `os` (its projection), in key order. */
export function projected(os: Array<{ key: string; value: Order }>) {
  return os.map((o) => ({
    key: o.key,
    value: { order_id: o.value.order_id, amount: o.value.amount, paid: o.value.paid },
  })).sort((a, b) => a.key.localeCompare(b.key));
}

/** The predicate the journeys change the starter's (`amount >= 100 AND paid = TRUE`) to. */
export const CHANGED_PREDICATE = "amount >= 200 AND paid = TRUE";

/** The orders {@link OutputAcrossChange} produces before and after the change. */
const BEFORE = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
const AFTER = orders("b", [150, 250, 199, 200, 500, 90, 201, 230]);
const passOld = (o: Order) => o.amount >= 100 && o.paid;
const passNew = (o: Order) => o.amount >= 200 && o.paid;

/**
 * The starter's output across its predicate change ({@link CHANGED_PREDICATE}), read
 * independently of sluice (the broker's records and committed offsets, the Docker CLI).
 */
export interface OutputAcrossChange {
  /**
   * Produce the first orders and wait for the old predicate's output, exact; keep the
   * application's committed offsets and its volume's instance.
   */
  beforeChange(): Promise<void>;
  /**
   * Produce the second orders: the output is the old predicate's records once, then the new
   * predicate's, exact; the offsets only moved forward and count every order; the volume keeps
   * its instance. `context` ends every failure's message (e.g. how to replay the run).
   */
  afterChange(context?: string): Promise<void>;
}

/**
 * {@link OutputAcrossChange} of the runner of `applicationId` (its volume `<id>-state`) between
 * `topics`, produced and read on the listener at `bootstrap`.
 */
export function outputAcrossChange(
  bootstrap: string,
  topics: { inputTopic: string; outputTopic: string },
  applicationId: string,
): OutputAcrossChange {
  const volume = `${applicationId}-state`;
  let offsetsBefore: Map<number, bigint> | null = null;
  let instance: string | undefined;
  const send = (batch: typeof BEFORE) =>
    produce(
      bootstrap,
      topics.inputTopic,
      batch.map((o) => ({ key: o.key, value: JSON.stringify(o.value) })),
    );
  return {
    async beforeChange() {
      await send(BEFORE);
      const oldOut = projected(BEFORE.filter((o) => passOld(o.value)));
      assert.deepEqual(await outputRecords(bootstrap, topics.outputTopic, oldOut.length), oldOut);
      offsetsBefore = await committedOffsets(bootstrap, applicationId, topics.inputTopic);
      instance = (await volumeLabels(volume))["sluice.volume-instance"];
      assert.ok(instance, `volume ${volume} has no instance label`);
    },
    async afterChange(context = "") {
      assert.ok(offsetsBefore, "afterChange before beforeChange");
      await send(AFTER);
      const all = projected([
        ...BEFORE.filter((o) => passOld(o.value)),
        ...AFTER.filter((o) => passNew(o.value)),
      ]);
      assert.deepEqual(
        await outputRecords(bootstrap, topics.outputTopic, all.length),
        all,
        context || undefined,
      );
      // the same application ID (its group kept its offsets, only forward) and volume instance
      assert.equal((await volumeLabels(volume))["sluice.volume-instance"], instance, context);
      const offsetsAfter = await committedOffsets(bootstrap, applicationId, topics.inputTopic);
      for (const [part, off] of offsetsBefore) {
        assert.ok(offsetsAfter.get(part)! >= off, `partition ${part} moved backwards ${context}`);
      }
      const total = [...offsetsAfter.values()].reduce((a, b) => a + b, 0n);
      assert.equal(total, BigInt(BEFORE.length + AFTER.length), context || undefined);
    },
  };
}

/** A fault site and side where a replacement's process kills itself, chosen by a seed. */
export interface KillPoint {
  seed: number;
  site: string;
  side: FaultSide;
  /** `site:side`, as `SLUICE_FAULT_POINT` takes it. */
  point: string;
  /** Every (site, side) of the replacement's table, in the table's order; `index` is this one's. */
  points: Array<{ site: string; side: FaultSide }>;
  index: number;
  /**
   * Killed after the operation's final commit (its finalize): nothing is left pending to resume,
   * the replacement is done.
   */
  afterCommit: boolean;
  /** Killed once the candidate was started: a resume does not start it again. */
  candidateStarted: boolean;
  /** The environment that arms it (`SLUICE_FAULT_POINT`, `SLUICE_TEST_ONLY_ALLOW_FAULTS`). */
  env: Record<string, string>;
  /** "(seed N, kill point P; replay with SLUICE_TEST_SEED=N)", for failure messages. */
  replay: string;
}

/**
 * A kill point chosen at random among the replacement table's sites and sides, seeded by
 * `SLUICE_TEST_SEED` when set (a fresh seed otherwise), and printed first under `label`, so that
 * a failure is replayed with `SLUICE_TEST_SEED=<seed>`.
 */
export function replacementKillPoint(label: string): KillPoint {
  const seed = Number(Deno.env.get("SLUICE_TEST_SEED") ?? Math.floor(Math.random() * 2 ** 31));
  const names = [...new Set(tableSites(REPLACEMENT_TABLE).map((s) => s.name))];
  const points = names.flatMap((site) =>
    (["before", "after"] as const).map((side) => ({ site, side }))
  );
  const index = Math.floor(seeded(seed)() * points.length);
  const { site, side } = points[index];
  const point = `${site}:${side}`;
  const at = (name: string, s: FaultSide) =>
    points.findIndex((x) => x.site === name && x.side === s);
  const started = at(REPLACEMENT_SITES.start.name, "after");
  assert.ok(started > 0, "the replacement's table starts the candidate");
  console.log(`[${label}] seed ${seed}: SIGKILL at ${point} (of ${points.length})`);
  return {
    seed,
    site,
    side,
    point,
    points,
    index,
    afterCommit: index === at(OPERATION_WRITES.finalize.name, "after"),
    candidateStarted: index >= started,
    env: { [FAULT_ENV.point]: point, [FAULT_ENV.allow]: "1" },
    replay: `(seed ${seed}, kill point ${point}; replay with SLUICE_TEST_SEED=${seed})`,
  };
}

/** Every regular file under `dir`, as text, by path (for a planted-secret search). */
export async function filesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) { for (const [p, t] of await filesUnder(path)) out.set(p, t); }
    else if (e.isFile) out.set(path, new TextDecoder().decode(await Deno.readFile(path)));
  }
  return out;
}

/**
 * The planted-secret search: no value of `planted` (what → value) is in any text of `places`
 * (where → text).
 */
export function assertNoSecretIn(
  places: Map<string, string>,
  planted: Array<[string, string]>,
): void {
  for (const [where, text] of places) {
    for (const [what, value] of planted) {
      assert.equal(text.includes(value), false, `${what} is in ${where}`);
    }
  }
}

/** A volume's labels, read with the Docker CLI (not through sluice). */
export async function volumeLabels(name: string): Promise<Record<string, string>> {
  const out = await new Deno.Command("docker", {
    args: ["volume", "inspect", "--format", "{{json .Labels}}", name],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** The application ID of the starter's model for project `name` (no environment). */
export function starterApplicationId(name: string): string {
  return `sluice-${name}-eligible_orders`;
}

/** Every container of `applicationId`, running or not (Docker's full IDs, from the Docker API). */
export async function containersOf(applicationId: string): Promise<string[]> {
  const found = await docker().listContainers({
    all: true,
    filters: { label: [`sluice.application-id=${applicationId}`] },
  });
  return found.map((c) => c.Id).sort();
}

/** Remove the containers and volume a CLI-driven apply created for `applicationId`. */
export async function removeApplication(applicationId: string): Promise<void> {
  await removeLabelled("sluice.application-id", applicationId);
}

/**
 * Wait until consumer group `group` committed every record of `topic` (its committed offset of
 * each partition equals the partition's end offset, both read through the Kafka admin API),
 * bounded by attempts; returns the end offsets (partition → offset, decimal strings).
 */
export async function caughtUp(
  bootstrap: string,
  group: string,
  topic: string,
  partitions = [0, 1, 2],
): Promise<Record<string, string>> {
  const str = (m: Iterable<[number, bigint]>) =>
    Object.fromEntries([...m].map(([k, v]) => [String(k), String(v)]));
  let ends: Record<string, string> = {};
  let committed: Record<string, string> = {};
  for (let i = 0; i < 300; i++) {
    const range = await offsetRange(bootstrap, topic, partitions);
    ends = str(range.map((x) => [x.partition, x.latest] as [number, bigint]));
    committed = str(await committedOffsets(bootstrap, group, topic));
    // a partition that never held a record has nothing to commit (none, or -1)
    const done = range.every((x) =>
      (committed[x.partition] ?? "-1") === (x.latest === 0n ? "-1" : String(x.latest)) ||
      (x.latest === 0n && committed[x.partition] === "0")
    );
    if (done) return ends;
    await new Promise((ok) => setTimeout(ok, 200));
  }
  assert.fail(
    `group ${group} never committed to ${JSON.stringify(ends)}: ${JSON.stringify(committed)}`,
  );
}

/** A state backend of a test project. */
export type StateBackend = "local" | "postgres";

/** The variable a PostgreSQL-state test project reads its DSN from (`state.dsn_env`). */
export const STATE_DSN_ENV = "SLUICE_TEST_STATE_DSN";

/** A starter project on one state backend, not deployed yet. */
export interface StarterOn {
  project: TestProject;
  /** The environment every `bin/sluice` run of it needs (the DSN for PostgreSQL state). */
  vars: Record<string, string>;
  /** Its state store, opened (not initialized: the first CLI command does that). */
  store: StateStore;
  applicationId: string;
}

/**
 * A starter project on `backend` state: local files in the project, or the shared PostgreSQL
 * through {@link STATE_DSN_ENV}. Nothing outside its directory exists yet.
 */
export async function starterOn(env: EnvDescriptor, backend: StateBackend): Promise<StarterOn> {
  const project = await starterProject(env, {
    image: await runnerImageId(),
    ...(backend === "postgres" ? { stateDsnEnv: STATE_DSN_ENV } : {}),
  });
  const store = openStateStore(
    backend === "postgres"
      ? { backend: "postgres", url: env.pgUrl, project: project.name, environment: null }
      : {
        backend: "local",
        dir: `${project.dir}/.sluice/state`,
        project: project.name,
        environment: null,
      },
  );
  return {
    project,
    vars: backend === "postgres" ? { [STATE_DSN_ENV]: env.pgUrl } : {},
    store,
    applicationId: starterApplicationId(project.name),
  };
}

/** Delete a project's rows from the shared PostgreSQL's `sluice` schema. */
export async function dropPgState(url: string, project: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const scope = JSON.stringify([project, null]);
    await c.query("DELETE FROM sluice.sluice_documents WHERE scope = $1", [scope]);
    // the history's event rows (migration 4) go with its document
    const rows = await c.query(
      "SELECT to_regclass('sluice.sluice_history_events') IS NOT NULL AS present",
    );
    if (rows.rows[0].present) {
      await c.query("DELETE FROM sluice.sluice_history_events WHERE scope = $1", [scope]);
    }
    await c.query("DELETE FROM sluice.sluice_locks WHERE scope = $1", [scope]);
  } finally {
    await c.end();
  }
}
