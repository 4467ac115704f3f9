/**
 * The fault matrix: every site of the fault inventory (`lib/fault/inventory.ts`) × before/after
 * × backend (local, postgres; a site declared for one backend only runs there) is one case.
 * A replacement case deploys a fresh starter project on the shared broker, produces records,
 * prepares the reviewed filter change with the installed CLI, and runs `apply --plan` in a
 * separate OS process that dies by SIGKILL at the armed site; fresh processes then diagnose and
 * resume (harness/faults.ts). Records are also produced while the worker is dead, and after
 * completion. A create case (a site only the create journey crosses) arms the first
 * `apply --plan` of the starter itself and recovers with `apply --plan` again. A connector case
 * (a site of the connector table) deploys the starter, declares two connectors on the
 * environment's Connect worker, arms the `apply --plan` of that change and recovers with
 * `apply --plan` again. The invariants are asserted and written to
 * `verification/fault-matrix.json`.
 *
 *   deno run -A probes/fault_matrix.ts [--only site:side] [--backend local|postgres]
 *
 * Uses the environment named by `SLUICE_ENV_FILE`, or starts (and removes) its own.
 * @module
 */
import { openStateStore } from "../lib/state/open.ts";
import { openControl } from "../lib/state/journal.ts";
import type { PartitionOffset } from "../lib/state/journal.ts";
import { findReceipt } from "../lib/state/engine.ts";
import { sharedEnv } from "../harness/env.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import { committedOffsets } from "../harness/kafka.ts";
import { runnerImageId } from "../harness/project.ts";
import { runCreateFaultJourney, runFaultJourney } from "../harness/faults.ts";
import { faultInventory, guardInventorySwitch, type Journey } from "../lib/fault/inventory.ts";
import type { HistoryEntry, StateShowView } from "../harness/faults.ts";
import { docker } from "../harness/docker.ts";
import { connectorsSection, declareSinkRemoved } from "../harness/pipeline.ts";
import { CONNECT_SITES } from "../lib/protocol/connector.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import { restConnect } from "../lib/providers/connect/rest.ts";
import {
  Assertions,
  type CaseEvidence,
  type CaseFixture,
  cli,
  environmentVersions,
  type Evidence,
  flag,
  inventory,
  NEW_PREDICATE,
  NEW_PREDICATE_SQL,
  newCase,
  now,
  observeRunner,
  OLD_PREDICATE,
  orders,
  summarize,
  toJson,
  VERIFICATION_DIR,
  writeEvidence,
} from "./common.ts";

/** One matrix case: a fault site (`boundary`), a side, a backend, and the journey to arm. */
export interface MatrixCase {
  boundary: string;
  side: "before" | "after";
  backend: "local" | "postgres";
  journey: Journey;
}

/** The cases, generated from the fault inventory (sites keep to their declared backends). */
export function matrixCases(filter: { only?: string; backend?: string } = {}): MatrixCase[] {
  const out: MatrixCase[] = [];
  for (const backend of ["local", "postgres"] as const) {
    if (filter.backend && filter.backend !== backend) continue;
    for (const e of faultInventory()) {
      if (e.site.backends && !e.site.backends.includes(backend)) continue;
      for (const side of ["before", "after"] as const) {
        if (filter.only && !filter.only.split(",").includes(`${e.site.name}:${side}`)) continue;
        out.push({ boundary: e.site.name, side, backend, journey: e.journeys[0] });
      }
    }
  }
  return out;
}

type OffsetVec = Record<string, string>;

function vec(m: Map<number, bigint>): OffsetVec {
  return Object.fromEntries(
    [...m.entries()].sort((a, b) => a[0] - b[0]).map(([p, o]) => [
      String(p),
      o.toString(),
    ]),
  );
}

function closeVec(offsets: PartitionOffset[]): OffsetVec {
  return Object.fromEntries(
    [...offsets].sort((a, b) => a.partition - b.partition).map((
      o,
    ) => [String(o.partition), o.offset]),
  );
}

function leq(a: OffsetVec, b: OffsetVec): boolean {
  return Object.entries(a).every(([p, o]) => b[p] !== undefined && BigInt(o) <= BigInt(b[p]));
}

async function runningCandidates(appId: string) {
  const filters = JSON.stringify({ label: [`sluice.application-id=${appId}`] });
  const list = await docker().listContainers({ all: true, filters });
  return list.map((c) => ({
    id: c.Id,
    name: c.Names[0]?.replace(/^\//, ""),
    state: c.State,
    operation: c.Labels["sluice.operation-id"] ?? null,
  }));
}

/** A case prepared up to the reviewed plan: the old runner running and processing. */
export interface Prepared {
  env: EnvDescriptor;
  fx: CaseFixture;
  a: Assertions;
  planPath: string;
  groupsBefore: string[];
  offsetsBefore: OffsetVec;
  serialBefore: number | null;
  /** The exact ID of the old (owned, running) runner container. */
  oldContainerId: string;
}

/** A sample taken while no worker runs (after a death or a disruption). */
export interface Sample {
  stage: string | null;
  offsets: OffsetVec;
  candidateRunning: boolean;
}

/** What {@link verifyCompletion} needs from a journey. */
export interface JourneyLike {
  operationId: string | null;
  outcome: string;
  blockers: Array<{ code: string; message: string }>;
  history: HistoryEntry[];
}

/** Deploy a fresh starter, produce, await the old output, then plan the filter change. */
export async function prepareCase(
  env: EnvDescriptor,
  image: string,
  backend: "local" | "postgres",
): Promise<Prepared> {
  const a = new Assertions();
  const fx = await newCase(env, image, backend);
  try {
    const before = orders("a", [50, 150, 250, 120, 300, 90, 210, 180]);
    await fx.produce(before);
    const expectOld = before.filter((o) => OLD_PREDICATE(o.value)).length;
    const warm = await fx.step("await old output", { n: expectOld }, () => fx.output(expectOld));
    a.check("old runner output before the operation", expectOld, warm.length);
    const groupsBefore = await fx.groups();
    const offsetsBefore = vec(
      await committedOffsets(env.bootstrapHost, fx.applicationId, fx.project.inputTopic),
    );
    const serialBefore = await fx.step("read ownership serial", null, async () => {
      const store = openFixtureStore(fx);
      try {
        return (await store.load()).ownership?.document.serial ?? null;
      } finally {
        await store.close();
      }
    });
    await fx.project.setPredicate(NEW_PREDICATE_SQL);
    const planPath = `${fx.project.dir}/replace.plan.json`;
    const planned = await cli(fx.history, "cli-0", "plan", [
      "plan",
      "--project",
      fx.project.dir,
      "--out",
      planPath,
    ], fx.workerEnv);
    const planData = planned.json?.data as { plan?: { format: number; actions: unknown[] } } | null;
    a.check("reviewed plan is format 6 with one action", { exit: 0, format: 6, actions: 1 }, {
      exit: planned.code,
      format: planData?.plan?.format ?? null,
      actions: planData?.plan?.actions.length ?? null,
    });
    const running = await runningCandidates(fx.applicationId);
    if (running.length !== 1) throw new Error(`expected one runner, found ${running.length}`);
    const oldContainerId = running[0].id;
    return { env, fx, a, planPath, groupsBefore, offsetsBefore, serialBefore, oldContainerId };
  } catch (e) {
    await fx.cleanup().catch(() => {});
    throw e;
  }
}

/** The fixture's state store, opened read-only (no lock is taken). */
export function openFixtureStore(fx: CaseFixture) {
  return openStateStore(
    fx.backend === "local"
      ? {
        backend: "local",
        dir: `${fx.project.dir}/.sluice/state`,
        project: fx.project.name,
        environment: null,
      }
      : { backend: "postgres", url: fx.dsn!, project: fx.project.name, environment: null },
  );
}

/** Sample committed offsets, the durable stage and whether a candidate runs. */
export async function sample(p: Prepared, stage: string | null): Promise<Sample> {
  const offsets = vec(
    await committedOffsets(p.env.bootstrapHost, p.fx.applicationId, p.fx.project.inputTopic),
  );
  const cands = await runningCandidates(p.fx.applicationId);
  return {
    stage,
    offsets,
    candidateRunning: cands.some((x) => x.id !== p.oldContainerId && x.state === "running"),
  };
}

/**
 * The invariants after a journey: completion, serial 1 → 2, audit, identity, volume, one
 * candidate, exact output (by the clean-close vector), offsets, groups, a no-op plan.
 * `interrupted`: whether a resume found a pending operation (so an incident must be kept).
 */
export async function verifyCompletion(
  p: Prepared,
  j: JourneyLike,
  samples: Sample[],
  interrupted: boolean,
): Promise<void> {
  const { env, fx, a } = p;
  a.check("the operation completed through the public commands", {
    outcome: "completed",
    blockers: [],
  }, { outcome: j.outcome, blockers: j.blockers });
  const after = orders("b", [150, 250, 199, 200, 500, 90, 201, 230]);
  await fx.produce(after);

  // the clean-close vector and incidents, from the completion receipt (read-only)
  const store = openFixtureStore(fx);
  let close: OffsetVec | null = null;
  let incidents = -1;
  let serialAfter: number | null = null;
  let incidentEvents = 0;
  let controlCleared = false;
  try {
    const snap = await store.load();
    serialAfter = snap.ownership?.document.serial ?? null;
    controlCleared = snap.control === null;
    const receipt = j.operationId ? findReceipt(snap.history.events, j.operationId) : null;
    if (receipt) {
      const ctl = openControl(receipt.terminal_control);
      const oc = ctl.checkpoints.find((x) => x.name === "old_closed");
      if (oc && oc.name === "old_closed") close = closeVec(oc.offsets);
      incidents = receipt.incidents.length;
      const ids = new Set(receipt.incidents.map((i) => i.incident_id));
      incidentEvents = snap.history.events.filter((e) =>
        e.kind === "incident" && ids.has((e as { incident_id: string }).incident_id)
      ).length;
    }
  } finally {
    await store.close();
  }
  a.check("ownership serial incremented exactly once", { before: 1, after: 2 }, {
    before: p.serialBefore,
    after: serialAfter,
  });
  a.check("pending control cleared", true, controlCleared);
  a.holds(
    "the original incident is kept in the audit (receipt and history events)",
    interrupted ? ">= 1 incident, each in history" : "0 incidents (no interruption)",
    { incidents, incidentEvents },
    interrupted ? incidents >= 1 && incidentEvents === incidents : incidents === 0,
  );

  // identity, volume, one candidate
  const obs = await observeRunner(fx);
  a.check("same application ID", fx.applicationId, obs.applicationId);
  a.check("same volume instance (label and file)", {
    label: fx.volumeInstance,
    file: fx.volumeInstance,
  }, { label: obs.volume.instanceLabel, file: obs.volume.instanceFile });
  const cands = await runningCandidates(fx.applicationId);
  a.check("exactly one container, the running candidate of this operation", [{
    state: "running",
    operation: j.operationId,
  }], cands.map((x) => ({ state: x.state, operation: x.operation })));
  a.check("one group member", 1, obs.kafka.group.members.length);

  // exact output
  const positions = await fx.inputPositions();
  a.check("every produced record is in the input topic", fx.produced.size, positions.size);
  const expected: Array<{ key: string; value: unknown }> = [];
  for (const [key, o] of fx.produced) {
    const pos = positions.get(key);
    const byOld = pos !== undefined && close !== null &&
      pos.offset < BigInt(close[String(pos.partition)] ?? "0");
    if (byOld ? OLD_PREDICATE(o) : NEW_PREDICATE(o)) {
      expected.push({ key, value: { order_id: o.order_id, amount: o.amount, paid: o.paid } });
    }
  }
  const got = await fx.step(
    "await final output",
    { n: expected.length },
    () => fx.output(expected.length),
  );
  const byKey = (x: { key: string }, y: { key: string }) => x.key.localeCompare(y.key);
  a.check(
    "output = records passing the predicate in force when processed (none lost, none duplicated)",
    expected.sort(byKey),
    got.sort(byKey),
  );

  // offsets
  const offsetsAfter = vec(
    await committedOffsets(env.bootstrapHost, fx.applicationId, fx.project.inputTopic),
  );
  const chain = [p.offsetsBefore, ...samples.map((s) => s.offsets), offsetsAfter];
  a.holds(
    "committed offsets never move backwards (before → every sample → after)",
    "non-decreasing per partition",
    chain,
    chain.every((v, i) => i === 0 || leq(chain[i - 1], v)),
  );
  const stopped = samples.filter((s) =>
    (s.stage === "old_closed" || s.stage === "old_removed" || s.stage === "replacement_created") &&
    !s.candidateRunning
  );
  a.check(
    "while stopped, committed offsets equal the clean-close vector",
    stopped.map(() => close),
    stopped.map((s) => s.offsets),
  );
  a.check(
    "final committed offsets account for every produced record",
    fx.produced.size.toString(),
    Object.values(offsetsAfter).reduce((s, x) => s + BigInt(x), 0n).toString(),
  );
  const groupsAfter = await fx.groups();
  // groups of other cases running side by side on the shared broker are not this case's
  const others = /orders[0-9a-f]{8}/;
  a.check(
    "no new consumer group",
    [],
    groupsAfter.filter((g) =>
      !p.groupsBefore.includes(g) && (g.includes(fx.project.name) || !others.test(g))
    ),
  );
  a.check("the application's group existed before and after", [true, true], [
    p.groupsBefore.includes(fx.applicationId),
    groupsAfter.includes(fx.applicationId),
  ]);

  // a no-op plan afterwards
  const noop = await cli(
    fx.history,
    "cli-9",
    "plan",
    ["plan", "--project", fx.project.dir],
    fx.workerEnv,
  );
  a.check("a no-op plan afterwards", { exit: 0, noop: true }, {
    exit: noop.code,
    noop: (noop.json?.data as { noop?: boolean } | null)?.noop ?? null,
  });
}

/** Wrap a case body: evidence with history, assertions, error and clean-up. */
export async function caseEvidence(
  id: string,
  meta: { boundary: string | null; side: "before" | "after" | null; backend: "local" | "postgres" },
  prepare: () => Promise<Prepared>,
  body: (p: Prepared) => Promise<HistoryEntry[]>,
): Promise<CaseEvidence> {
  const t0 = Date.now();
  const started_at = now();
  let history: HistoryEntry[] = [];
  let assertions: CaseEvidence["assertions"] = [];
  let error: string | null = null;
  let p: Prepared | undefined;
  try {
    p = await prepare();
    assertions = p.a.list;
    history = p.fx.history;
    const extra = await body(p);
    history = [...p.fx.history, ...extra];
  } catch (e) {
    error = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
    if (p) history = [...p.fx.history, ...history.filter((h) => !p!.fx.history.includes(h))];
  } finally {
    await p?.fx.cleanup().catch(() => {});
  }
  history.sort((x, y) => x.time.localeCompare(y.time));
  if (history.length === 0) {
    history.push({ process: "harness", type: "fail", f: "prepare", value: error, time: now() });
  }
  return {
    id,
    ...meta,
    started_at,
    duration_ms: Date.now() - t0,
    history: toJson(history) as CaseEvidence["history"],
    assertions,
    ok: error === null && assertions.length > 0 && assertions.every((x) => x.ok),
    error,
  };
}

/**
 * One connector-journey case: the starter deployed, then a connector change — its two
 * connectors declared (a source writing its input topic, a sink reading its output topic); for
 * the update site, those deployed first and the sink's file changed; for the delete site,
 * deployed first and the sink declared removed. The first `apply --plan` of the change dies at
 * the armed site; the recovery is `apply --plan` again. Then: the site fired, no pending
 * operation, exactly the expected connectors exist once each and are owned, a no-op plan.
 */
export function runConnectorCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
): Promise<CaseEvidence> {
  const connect = env.connect;
  const names: string[] = [];
  const scenario = c.boundary === CONNECT_SITES.update.name
    ? "update"
    : c.boundary === CONNECT_SITES.delete.name
    ? "remove"
    : "create";
  return caseEvidence(
    `${c.boundary}:${c.side}:${c.backend}`,
    { boundary: c.boundary, side: c.side, backend: c.backend },
    async () => {
      if (!connect) throw new Error("the environment has no Connect worker");
      const fx = await newCase(env, image, c.backend, { deploy: "sdk" });
      const project = fx.project.name;
      names.push(`sluice-${project}-orders_in`, `sluice-${project}-orders_out`);
      await fx.project.editManifest((t) =>
        t + "\n" + connectorsSection({
          connect,
          project,
          inputTopic: fx.project.inputTopic,
          outputTopic: fx.project.outputTopic,
        })
      );
      if (scenario !== "create") {
        await fx.step("plan+apply the connectors (SDK)", { project }, async () => {
          const pl = await plan({ dir: fx.project.dir });
          await apply({ dir: fx.project.dir, plan: pl.plan, planSha256: pl.sha256 });
        });
        await fx.project.editManifest(
          scenario === "update"
            ? (t) => t.replace(`${project}-eligible.jsonl`, `${project}-eligible-v2.jsonl`)
            : declareSinkRemoved({ sinkConnector: names[1] }),
        );
      }
      const cleanup = fx.cleanup;
      fx.cleanup = async () => {
        const port = restConnect(connect.restHost);
        for (const n of names) await port.deleteConnector(n).catch(() => {});
        await cleanup();
      };
      return {
        env,
        fx,
        a: new Assertions(),
        planPath: `${fx.project.dir}/connectors.plan.json`,
        groupsBefore: [],
        offsetsBefore: {},
        serialBefore: null,
        oldContainerId: "",
      };
    },
    async (p) => {
      const { fx, a } = p;
      const j = await runCreateFaultJourney({
        projectDir: fx.project.dir,
        planPath: p.planPath,
        site: c.boundary,
        side: c.side,
        env: fx.workerEnv,
      });
      a.check("the worker died by SIGKILL at the armed fault point", true, j.faultFired);
      a.check("the connector change completed through the public commands", {
        outcome: "completed",
        blockers: [],
      }, { outcome: j.outcome, blockers: j.blockers });
      const store = openFixtureStore(fx);
      let owned: string[] = [];
      let controlCleared = false;
      try {
        const snap = await store.load();
        owned = (snap.ownership?.document.connectors ?? []).map((x) => x.name);
        controlCleared = snap.control === null;
      } finally {
        await store.close();
      }
      const expected = (scenario === "remove" ? names.slice(0, 1) : names).sort();
      a.check("the changed connectors owned and no pending operation", {
        owned: expected,
        controlCleared: true,
      }, { owned, controlCleared });
      const port = restConnect(connect!.restHost);
      const listed = (await port.listConnectors()).filter((n) => names.includes(n));
      a.check("each connector exists exactly once on the worker", expected, listed);
      if (scenario === "update") {
        a.check(
          "the sink has the updated configuration",
          `/data/${fx.project.name}-eligible-v2.jsonl`,
          (await port.connectorConfig(names[1]))?.file ?? null,
        );
      }
      const noop = await cli(
        fx.history,
        "cli-9",
        "plan",
        ["plan", "--project", fx.project.dir],
        fx.workerEnv,
      );
      a.check("a no-op plan afterwards", { exit: 0, noop: true }, {
        exit: noop.code,
        noop: (noop.json?.data as { noop?: boolean } | null)?.noop ?? null,
      });
      return j.history;
    },
  );
}

/** Run one matrix case and return its evidence. */
export function runCase(env: EnvDescriptor, image: string, c: MatrixCase): Promise<CaseEvidence> {
  if (c.journey === "create") return runCreateCase(env, image, c);
  if (c.journey === "connector") return runConnectorCase(env, image, c);
  return caseEvidence(
    `${c.boundary}:${c.side}:${c.backend}`,
    { boundary: c.boundary, side: c.side, backend: c.backend },
    () => prepareCase(env, image, c.backend),
    async (p) => {
      const samples: Sample[] = [];
      const during = orders("d", [150, 250, 99, 200, 320, 130]);
      const j = await runFaultJourney({
        projectDir: p.fx.project.dir,
        planPath: p.planPath,
        boundary: c.boundary,
        side: c.side,
        env: p.fx.workerEnv,
        afterDeath: async (_j, view) => {
          samples.push(await sample(p, view?.pending_operation?.last_checkpoint ?? null));
        },
        whileDead: async () => {
          await p.fx.produce(during);
        },
      });
      p.a.check("the worker died by SIGKILL at the armed fault point", true, j.faultFired);
      const killed = j.workers.filter((w) => w.signal === "SIGKILL");
      p.a.check(
        "every killed worker printed SLUICE_FAULT_FIRED for its armed point",
        killed.map((w) => w.fault),
        killed.map((w) => w.fired),
      );
      if (c.backend === "local") {
        p.a.check(
          "stale locks of killed workers were broken explicitly, by lock ID",
          killed.length,
          j.brokenLocks.length,
        );
      }
      // an incident must be kept when a resume found the operation pending
      const interrupted =
        j.shows.some((v) =>
          (v as StateShowView | null)?.pending_operation?.status === "in_progress"
        ) && j.workers.some((w) => w.args.includes("resume"));
      await verifyCompletion(p, j, samples, interrupted);
      return j.history;
    },
  );
}

/**
 * One create-journey case: a fresh starter (not deployed) whose first `apply --plan` dies at the
 * armed site; the recovery is `apply --plan` again. Then: the site fired, the create completed,
 * one running runner, serial 1, no pending operation, the model's output, a no-op plan.
 */
export function runCreateCase(
  env: EnvDescriptor,
  image: string,
  c: MatrixCase,
): Promise<CaseEvidence> {
  return caseEvidence(
    `${c.boundary}:${c.side}:${c.backend}`,
    { boundary: c.boundary, side: c.side, backend: c.backend },
    async () => {
      const fx = await newCase(env, image, c.backend, { deploy: "none" });
      return {
        env,
        fx,
        a: new Assertions(),
        planPath: `${fx.project.dir}/create.plan.json`,
        groupsBefore: [],
        offsetsBefore: {},
        serialBefore: null,
        oldContainerId: "",
      };
    },
    async (p) => {
      const { fx, a } = p;
      const j = await runCreateFaultJourney({
        projectDir: fx.project.dir,
        planPath: p.planPath,
        site: c.boundary,
        side: c.side,
        env: fx.workerEnv,
      });
      a.check("the worker died by SIGKILL at the armed fault point", true, j.faultFired);
      const killed = j.workers.filter((w) => w.signal === "SIGKILL");
      a.check(
        "every killed worker printed SLUICE_FAULT_FIRED for its armed point",
        killed.map((w) => w.fault),
        killed.map((w) => w.fired),
      );
      a.check("the create completed through the public commands", {
        outcome: "completed",
        blockers: [],
      }, { outcome: j.outcome, blockers: j.blockers });
      const store = openFixtureStore(fx);
      let serial: number | null = null;
      let controlCleared = false;
      try {
        const snap = await store.load();
        serial = snap.ownership?.document.serial ?? null;
        controlCleared = snap.control === null;
      } finally {
        await store.close();
      }
      a.check("ownership serial 1 and no pending operation", { serial: 1, controlCleared: true }, {
        serial,
        controlCleared,
      });
      const cands = await runningCandidates(fx.applicationId);
      a.check(
        "exactly one container for the application ID, running",
        ["running"],
        cands.map((x) => x.state),
      );
      if (j.outcome === "completed") {
        const records = orders("c", [50, 150, 250, 120, 300]);
        await fx.produce(records);
        const expected = records.filter((o) => OLD_PREDICATE(o.value)).length;
        const got = await fx.step("await output", { n: expected }, () => fx.output(expected));
        a.check("output = the records passing the predicate", expected, got.length);
      }
      const noop = await cli(
        fx.history,
        "cli-9",
        "plan",
        ["plan", "--project", fx.project.dir],
        fx.workerEnv,
      );
      a.check("a no-op plan afterwards", { exit: 0, noop: true }, {
        exit: noop.code,
        noop: (noop.json?.data as { noop?: boolean } | null)?.noop ?? null,
      });
      return j.history;
    },
  );
}

/** Run the matrix and write its evidence. */
export async function main(): Promise<number> {
  guardInventorySwitch();
  const t0 = Date.now();
  const env = await sharedEnv();
  const image = await runnerImageId();
  const cases = matrixCases({ only: flag("--only"), backend: flag("--backend") });
  const evidence: Evidence = {
    probe: "fault-matrix",
    schema_version: 1,
    generated_at: now(),
    duration_ms: 0,
    environment: await environmentVersions(env),
    boundary_inventory: inventory(),
    cases: [],
    summary: summarize([]),
  };
  // --keep-existing: an interrupted matrix continues; cases already in the evidence file (for
  // the same inventory) are kept as they were recorded, only the missing ones run
  const kept: CaseEvidence[] = [];
  if (Deno.args.includes("--keep-existing")) {
    try {
      const old = JSON.parse(
        await Deno.readTextFile(`${VERIFICATION_DIR}/fault-matrix.json`),
      ) as Evidence;
      const same =
        JSON.stringify(old.boundary_inventory) === JSON.stringify(evidence.boundary_inventory);
      const wanted = new Set(cases.map((c) => `${c.boundary}:${c.side}:${c.backend}`));
      if (same) kept.push(...old.cases.filter((c) => c.ok && wanted.has(c.id)));
    } catch {
      // nothing to keep
    }
    const have = new Set(kept.map((c) => c.id));
    cases.splice(
      0,
      cases.length,
      ...cases.filter((c) => !have.has(`${c.boundary}:${c.side}:${c.backend}`)),
    );
    console.log(`[fault-matrix] keeping ${kept.length} recorded cases; running ${cases.length}`);
  }
  // cases share the broker but nothing else, so a small pool may run them side by side
  const jobs = Math.max(1, Number(flag("--jobs") ?? Deno.env.get("SLUICE_PROBE_JOBS") ?? "3"));
  const results: CaseEvidence[] = new Array(cases.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const r = await runCase(env, image, cases[i]);
      results[i] = r;
      done++;
      const bad = r.assertions.filter((x) => !x.ok).map((x) => x.name);
      console.log(
        `[fault-matrix] ${done}/${cases.length} ${r.id}: ${r.ok ? "ok" : "FAILED"} ` +
          `(${(r.duration_ms / 1000).toFixed(1)}s)${bad.length ? ` — ${bad.join("; ")}` : ""}${
            r.error ? ` — ${r.error.split("\n")[0]}` : ""
          }`,
      );
      evidence.cases = [...kept, ...results.filter((x) => x !== undefined)];
      evidence.summary = summarize(evidence.cases);
      evidence.duration_ms = Date.now() - t0;
      await writeEvidence(evidence);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, cases.length) }, worker));
  evidence.cases = [...kept, ...results.filter((x) => x !== undefined)];
  evidence.summary = summarize(evidence.cases);
  evidence.duration_ms = Date.now() - t0;
  const path = await writeEvidence(evidence);
  console.log(
    `[fault-matrix] ${evidence.summary.passed}/${evidence.summary.cases} cases passed in ${
      (evidence.duration_ms / 1000).toFixed(0)
    }s → ${path}`,
  );
  return evidence.summary.failed === 0 ? 0 : 1;
}

if (import.meta.main) {
  Deno.exit(await main());
}
