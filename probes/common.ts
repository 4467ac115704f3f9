/**
 * Shared pieces of the probes: the evidence document (environment versions read from the real
 * services, the fault inventory, cases with history and assertions, a summary computed from
 * the assertions), atomic evidence writes, and the per-case fixture (a fresh starter project on
 * the shared broker, its own PostgreSQL database for the postgres backend, clean-up by label).
 *
 * @example
 * ```ts
 * import { Assertions } from "./common.ts";
 * const a = new Assertions();
 * a.check("serial", 2, 2);
 * console.log(a.ok);
 * ```
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import pg from "pg";
import { docker, dockerCli } from "../harness/docker.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import type { HistoryEntry } from "../harness/faults.ts";
import { produce, readAll, withAdmin } from "../harness/kafka.ts";
import { starterProject } from "../harness/project.ts";
import type { TestProject } from "../harness/project.ts";
import { runWorker } from "../harness/worker.ts";
import { apply, observe, plan } from "../lib/runtime/session.ts";
import { faultInventory } from "../lib/fault/inventory.ts";
import { loadProject } from "../lib/project/load.ts";
import { compile } from "../lib/project/compile.ts";

const ROOT = new URL("..", import.meta.url).pathname;
/** Where evidence files go (`SLUICE_VERIFICATION_DIR` overrides, e.g. for a scratch run). */
export const VERIFICATION_DIR = Deno.env.get("SLUICE_VERIFICATION_DIR") ?? `${ROOT}verification`;

/** One assertion of a case. */
export interface Assertion {
  name: string;
  expected: unknown;
  actual: unknown;
  ok: boolean;
}

/** One case of a probe. */
export interface CaseEvidence {
  id: string;
  boundary: string | null;
  side: "before" | "after" | null;
  backend: "local" | "postgres";
  started_at: string;
  duration_ms: number;
  history: HistoryEntry[];
  assertions: Assertion[];
  ok: boolean;
  error: string | null;
}

/** A probe's evidence file. */
export interface Evidence {
  probe: string;
  schema_version: 1;
  generated_at: string;
  duration_ms: number;
  environment: Record<string, string>;
  boundary_inventory: { count: number; boundaries: Array<{ name: string; kind: string }> };
  cases: CaseEvidence[];
  summary: {
    cases: number;
    passed: number;
    failed: number;
    assertions: number;
    failed_assertions: number;
  };
}

/** Collects assertions; a failed one does not stop the case. */
export class Assertions {
  readonly list: Assertion[] = [];
  check(name: string, expected: unknown, actual: unknown): boolean {
    const ok = isDeepStrictEqual(toJson(expected), toJson(actual));
    this.list.push({ name, expected: toJson(expected), actual: toJson(actual), ok });
    return ok;
  }
  /** A predicate assertion: `ok` computed by the caller's test, both values recorded. */
  holds(name: string, expected: unknown, actual: unknown, ok: boolean): boolean {
    this.list.push({ name, expected: toJson(expected), actual: toJson(actual), ok });
    return ok;
  }
  get ok(): boolean {
    return this.list.length > 0 && this.list.every((a) => a.ok);
  }
}

/** JSON-safe copy (bigint → string, Map → object). */
export function toJson(v: unknown): unknown {
  return JSON.parse(
    JSON.stringify(
      v,
      (_k, x) =>
        typeof x === "bigint" ? x.toString() : x instanceof Map ? Object.fromEntries(x) : x,
    ),
  );
}

/** The summary, computed from the cases' assertions. */
export function summarize(cases: CaseEvidence[]): Evidence["summary"] {
  const all = cases.flatMap((c) => c.assertions);
  const passed = cases.filter((c) =>
    c.error === null && c.assertions.length > 0 &&
    c.assertions.every((a) => a.ok)
  ).length;
  return {
    cases: cases.length,
    passed,
    failed: cases.length - passed,
    assertions: all.length,
    failed_assertions: all.filter((a) => !a.ok).length,
  };
}

/** The fault inventory as the code composes it (lib/fault/inventory.ts). */
export function inventory(): Evidence["boundary_inventory"] {
  const b = faultInventory();
  return { count: b.length, boundaries: b.map((x) => ({ name: x.site.name, kind: x.site.kind })) };
}

async function cmd(bin: string, args: string[]): Promise<string> {
  try {
    const out = await new Deno.Command(bin, { args, stdout: "piped", stderr: "piped" }).output();
    return new TextDecoder().decode(out.stdout).trim();
  } catch (e) {
    return `unavailable: ${e instanceof Error ? e.message : e}`;
  }
}

/** Versions read from the running services. */
export async function environmentVersions(env: EnvDescriptor): Promise<Record<string, string>> {
  const jars = await cmd(dockerCli(), [
    "exec",
    env.brokerContainerId,
    "sh",
    "-c",
    "ls /opt/kafka/libs | grep '^kafka_'",
  ]);
  const kafka = /kafka_([0-9.]+)-([0-9.]+)\.jar/.exec(jars);
  const dockerVersion = await docker().version() as { Version: string; ApiVersion: string };
  let postgres = "unavailable";
  const c = new pg.Client({ connectionString: env.pgUrl });
  try {
    await c.connect();
    postgres = (await c.query("SHOW server_version")).rows[0].server_version;
  } catch (e) {
    postgres = `unavailable: ${e instanceof Error ? e.message : e}`;
  } finally {
    await c.end().catch(() => {});
  }
  const runner = await cmd("bash", [`${ROOT}runner/build.sh`, "--check"]);
  return {
    kafka: kafka ? kafka[2] : `unknown (${jars})`,
    kafka_scala: kafka ? kafka[1] : "unknown",
    kafka_cluster_id: env.clusterId,
    docker: dockerVersion.Version,
    docker_api: dockerVersion.ApiVersion,
    postgresql: postgres,
    deno: Deno.version.deno,
    typescript: Deno.version.typescript,
    runner_image: runner,
    os: `${Deno.build.os}-${Deno.build.arch}`,
    cpus: String(navigator.hardwareConcurrency),
  };
}

/** Write `verification/<probe>.json` atomically (temp file + rename). */
export async function writeEvidence(e: Evidence): Promise<string> {
  await Deno.mkdir(VERIFICATION_DIR, { recursive: true });
  const path = `${VERIFICATION_DIR}/${e.probe}.json`;
  const tmp = `${path}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(e, null, 2) + "\n");
  await Deno.rename(tmp, path);
  return path;
}

/** An order record of the starter. */
export interface Order {
  order_id: string;
  amount: number;
  paid: boolean;
  customer: string | null;
}

/** Orders with keys `<prefix>-<i>`. */
export function orders(prefix: string, amounts: number[]): Array<{ key: string; value: Order }> {
  return amounts.map((amount, i) => ({
    key: `${prefix}-${i}`,
    value: { order_id: `${prefix}-${i}`, amount, paid: i % 4 !== 3, customer: null },
  }));
}

/** The starter's predicate and the replacement's. */
export const OLD_PREDICATE = (o: Order) => o.amount >= 100 && o.paid;
export const NEW_PREDICATE = (o: Order) => o.amount >= 200 && o.paid;
export const NEW_PREDICATE_SQL = "amount >= 200 AND paid = TRUE";

/** A fresh case: a starter project created and running, with its state backend. */
export interface CaseFixture {
  project: TestProject;
  backend: "local" | "postgres";
  /** Environment for CLI workers (the DSN variable for postgres). */
  workerEnv: Record<string, string>;
  /** The PostgreSQL DSN of this case's own database (postgres backend). */
  dsn: string | null;
  applicationId: string;
  /** The state volume's instance UUID ("" until a deploy created it: `deploy: "none"`). */
  volumeInstance: string;
  history: HistoryEntry[];
  /** Append a harness step to the history. */
  step<T>(f: string, value: unknown, fn: () => Promise<T>): Promise<T>;
  /** Produce orders to the input topic. */
  produce(records: Array<{ key: string; value: Order }>): Promise<void>;
  /** Everything produced so far, by key. */
  produced: Map<string, Order>;
  /** Read the output topic until `n` records (or idle). */
  output(n: number): Promise<Array<{ key: string; value: unknown }>>;
  /** Read the input topic: key → partition/offset. */
  inputPositions(): Promise<Map<string, { partition: number; offset: bigint }>>;
  /** Group IDs on the broker, harness readers excluded. */
  groups(): Promise<string[]>;
  cleanup(): Promise<void>;
}

/** The prefix of the DSN variable each postgres fixture's manifest names (one per case). */
export const DSN_VAR_PREFIX = "SLUICE_PROBE_DSN_";

/**
 * Create a fresh project and deploy it through the SDK (or, with `deploy: "none"`, leave the
 * deploy to the case: a create-journey fault case applies it through the CLI).
 */
export async function newCase(
  env: EnvDescriptor,
  image: string,
  backend: "local" | "postgres",
  options: { deploy?: "sdk" | "none" } = {},
): Promise<CaseFixture> {
  const history: HistoryEntry[] = [];
  const step = async <T>(f: string, value: unknown, fn: () => Promise<T>): Promise<T> => {
    history.push({ process: "harness", type: "invoke", f, value: toJson(value), time: now() });
    try {
      const r = await fn();
      history.push({ process: "harness", type: "ok", f, value: null, time: now() });
      return r;
    } catch (e) {
      history.push({ process: "harness", type: "fail", f, value: String(e), time: now() });
      throw e;
    }
  };
  const workerEnv: Record<string, string> = {};
  let database: string | null = null;
  const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  const dsnVar = `${DSN_VAR_PREFIX}${tag.toUpperCase()}`;
  let dsn: string | null = null;
  if (backend === "postgres") {
    database = `sluice_probe_${tag}`;
    await pgAdmin(env.pgUrl, `CREATE DATABASE ${database}`);
    const u = new URL(env.pgUrl);
    u.pathname = `/${database}`;
    dsn = u.toString();
    workerEnv[dsnVar] = dsn;
    // in-process SDK calls read the variable too; one name per case keeps parallel cases apart
    Deno.env.set(dsnVar, dsn);
  }
  const project = await starterProject(env, {
    image,
    stateDsnEnv: backend === "postgres" ? dsnVar : undefined,
  });
  let applicationId: string;
  let volumeInstance = "";
  if (options.deploy === "none") {
    applicationId = compile(await loadProject(project.dir)).artifacts[0].artifact.application_id;
  } else {
    const created = await step("plan+apply (SDK)", { project: project.name }, async () => {
      const pl = await plan({ dir: project.dir });
      return await apply({
        dir: project.dir,
        plan: pl.plan,
        planSha256: pl.sha256,
        extraLabels: env.labels,
      });
    });
    applicationId = created.runners[0].application_id;
    volumeInstance = created.runners[0].volume_instance;
  }
  const produced = new Map<string, Order>();
  const fx: CaseFixture = {
    project,
    backend,
    workerEnv,
    dsn,
    applicationId,
    volumeInstance,
    history,
    step,
    produced,
    async produce(records) {
      await step(
        "produce",
        { topic: project.inputTopic, keys: records.map((r) => r.key) },
        () =>
          produce(
            env.bootstrapHost,
            project.inputTopic,
            records.map((r) => ({ key: r.key, value: JSON.stringify(r.value) })),
          ),
      );
      for (const r of records) produced.set(r.key, r.value);
    },
    async output(n) {
      let got: Array<{ key: string; value: unknown }> = [];
      for (let i = 0; i < 60 && got.length < n; i++) {
        got = (await readAll(env.bootstrapHost, project.outputTopic, {
          partitions: [0, 1, 2],
          expect: n,
        })).map((r) => ({ key: r.key ?? "", value: JSON.parse(r.value!) }));
        if (got.length < n) await new Promise((r) => setTimeout(r, 500));
      }
      // a final settle read: anything beyond n is a duplicate or a wrong record
      await new Promise((r) => setTimeout(r, 1000));
      got = (await readAll(env.bootstrapHost, project.outputTopic, { partitions: [0, 1, 2] }))
        .map((r) => ({ key: r.key ?? "", value: JSON.parse(r.value!) }));
      return got;
    },
    async inputPositions() {
      const recs = await readAll(env.bootstrapHost, project.inputTopic, {
        partitions: [0, 1, 2],
        expect: produced.size,
      });
      return new Map(
        recs.map((r) => [r.key ?? "", { partition: r.partition!, offset: r.offset! }]),
      );
    },
    groups() {
      return withAdmin(env.bootstrapHost, async (admin) => {
        const g = await admin.listGroups();
        return [...g.keys()].filter((x) => !x.startsWith("sluice-harness-reader-")).sort();
      });
    },
    async cleanup() {
      const d = docker();
      const filters = JSON.stringify({ label: [`sluice.application-id=${applicationId}`] });
      for (const c of await d.listContainers({ all: true, filters })) {
        await d.getContainer(c.Id).remove({ force: true, v: true }).catch(() => {});
      }
      const { Volumes } = await d.listVolumes({ filters });
      for (const v of Volumes ?? []) {
        await d.getVolume(v.Name).remove({ force: true }).catch(() => {});
      }
      await withAdmin(
        env.bootstrapHost,
        (admin) => admin.deleteTopics({ topics: [project.inputTopic, project.outputTopic] }),
      ).catch(() => {});
      if (database) {
        await pgAdmin(env.pgUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(
          () => {},
        );
        Deno.env.delete(dsnVar);
      }
      await Deno.remove(project.dir, { recursive: true }).catch(() => {});
    },
  };
  return fx;
}

async function pgAdmin(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** ISO time now. */
export function now(): string {
  return new Date().toISOString();
}

/** `sluice -o json ...` in a fresh process, recorded in `history` as process `name`. */
export async function cli(
  history: HistoryEntry[],
  name: string,
  f: string,
  args: string[],
  env: Record<string, string>,
) {
  history.push({ process: name, type: "invoke", f, value: { args }, time: now() });
  const r = await runWorker(["-o", "json", ...args], { env });
  history.push({
    process: name,
    type: r.code === 0 ? "ok" : r.signal ? "info" : "fail",
    f,
    value: {
      exit: r.code,
      errors: r.json?.errors?.map((e) => ({ code: e.code, message: e.message })) ?? [],
    },
    time: r.endedAt,
  });
  return r;
}

/** The runner observation of the fixture's project (SDK, read-only). */
export async function observeRunner(fx: CaseFixture) {
  return (await observe({ dir: fx.project.dir })).runners[0];
}

/** The value after `name` on the probe's command line (`--only a,b`), if given. */
export function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}
