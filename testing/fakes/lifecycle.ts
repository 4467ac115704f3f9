/**
 * The simulated processes of fake containers, above all the sluice runner, as
 * `runner/src/main/java/dev/sluice/runner/Main.java` behaves (docs/runner.md):
 *
 * - **start** makes the container `running` at once (as `docker start` returns once the
 *   process exists); the status file still holds whatever an earlier run left.
 * - At its **verdict** (`runner_startup_ms` world milliseconds later) the runner loads the
 *   mounted plan (a real host file): unreadable → exit 10; `SLUICE_PLAN_SHA256` missing or
 *   different → 11; a plan that does not parse strictly → 10 (a wrong artifact checksum → 11).
 *   It writes `STARTING`, then runs the identity gate: broker unreachable from the container
 *   (the plan's bootstrap is not an internal listener, or the broker is down) → 15
 *   `KAFKA_UNREACHABLE`; another cluster or topic ID → 12; an input partition without a
 *   committed offset → 14. Otherwise it writes `RUNNING` (generation from `SLUICE_GENERATION`,
 *   plan sha256 of the bytes read) and joins the group `application_id` as its one member, its
 *   client ID the generation's (`ClientId.java`).
 * - **Running**, it processes every record produced to the input topic at each step of the
 *   world, exactly once: strict decoding against the plan's schema, the predicate, the
 *   projection written to the output topic, the group's committed offsets following. A bad
 *   record aborts that step's transaction and stops the runner (exit 13).
 * - **TERM** before the verdict exits 143 with the status at `STARTING`; after it, the runner
 *   writes `CLOSING`, and `runner_close_ms` later commits, leaves the group (the group is
 *   Empty) and writes `CLOSED` with exit code 143, then exits 143.
 * - **SIGKILL** (and an OOM kill) exits 137 at once: the status file still says what it said,
 *   and the member stays in the group until `session_timeout_ms` has passed.
 * - **Hooks** replace the next verdict (e.g. exit 15 before RUNNING) or the next close (e.g.
 *   exit 15 `CLOSE_TIMEOUT`).
 *
 * Every transition is a pure change of the {@link World} at a given world time; the ports call
 * {@link advanceWorld} at the start of every call, so a process "moves" whenever anyone looks.
 *
 * @example
 * ```ts
 * import { advanceWorld } from "./lifecycle.ts";
 * // inside a world transaction: advanceWorld(w, clock.now(), ids);
 * ```
 * @module
 */
import { canonicalJson, sha256Hex } from "../../lib/artifact/canonical.ts";
import { decodeRecord } from "../../lib/expr/decode.ts";
import { evaluate } from "../../lib/expr/evaluate.ts";
import type { Value } from "../../lib/expr/schema.ts";
import type { MountedPlan } from "../../lib/protocol/mounted_plan.ts";
import { parseMountedPlan } from "../../lib/protocol/mounted_plan.ts";
import { runnerClientId } from "../../lib/validation/group_member.ts";
import { isoAt } from "./clock.ts";
import type { IdSource } from "./ids.ts";
import { readContainerPath, writeContainerPath } from "./_files.ts";
import { appendRecord } from "./_records.ts";
import type {
  FakeContainer,
  FakeGroup,
  FakeProcess,
  FakeTopology,
  PlannedExit,
  RunnerHook,
  World,
} from "./world.ts";
import { daemonNames, logMutation, onDaemon } from "./world.ts";

/** The runner's own defaults (Main.java), overridable by the container's environment. */
const RUNNER_DEFAULTS = { planPath: "/etc/sluice/plan.json", dataDir: "/var/lib/sluice" };

/** The container's environment as a map (later entries win, as in a process). */
export function envOf(c: FakeContainer): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of c.env) {
    const i = e.indexOf("=");
    if (i > 0) m.set(e.slice(0, i), e.slice(i + 1));
  }
  return m;
}

/** Where the runner of container `c` writes its status file. */
export function statusPath(c: FakeContainer): string {
  return `${envOf(c).get("SLUICE_DATA_DIR") ?? RUNNER_DEFAULTS.dataDir}/status.json`;
}

function isRunner(w: World, c: FakeContainer): boolean {
  return w.docker.images[c.image_id]?.behaviour === "runner";
}

/** Write the runner's status file as StatusFile.java does (canonical JSON and a newline). */
function writeStatus(
  w: World,
  c: FakeContainer,
  p: FakeProcess,
  now: number,
  state: string,
  exit: { code: number; reason: string; detail: string | null; stop?: unknown } | null,
): void {
  if (state === "RUNNING") p.running_at = isoAt(now);
  const doc = {
    format: "sluice.runner-status",
    version: 4,
    generation: p.generation,
    // the Streams client ID it set from its generation (StatusFile.java, version 4)
    client_id: p.generation ? runnerClientId(p.generation) : null,
    plan_sha256: p.plan_sha256,
    application_id: p.application_id,
    state,
    pid: 1,
    started_at: p.started_at,
    running_at: p.running_at,
    updated_at: isoAt(now),
    exit_code: exit?.code ?? null,
    reason: exit?.reason ?? (state === "CLOSING" ? "SIGTERM" : null),
    detail: exit?.detail ?? null,
    // as StatusFile.java: the stop context on FAILED (model, record position, shape and rule)
    stop: state === "FAILED" ? exit?.stop ?? null : null,
    // the offset vectors (StatusFile.java, version 3)
    start_offsets: p.start_offsets ?? null,
    close_offsets: state === "CLOSED" && p.group_id && p.input_topic
      ? inputOffsets(w, p.group_id, p.input_topic)
      : null,
    previous_close: p.previous_close ?? null,
  };
  writeContainerPath(w, c, statusPath(c), new TextEncoder().encode(canonicalJson(doc) + "\n"));
  // StatusFile.java prints a marker line with every status it writes
  (c.stdout ??= []).push({
    at: isoAt(now),
    line: `SLUICE_RUNNER_STATE ${state} ${p.generation ?? "-"} ${p.plan_sha256 ?? "-"}`,
  });
}

/** The group's committed offsets of the input topic, partition → decimal offset. */
function inputOffsets(w: World, groupId: string, topic: string): Record<string, string> {
  return { ...(w.kafka.groups[groupId]?.offsets[topic] ?? {}) };
}

/**
 * The close vector of the run before, from the status file it left (StatusFile.previousCloseOf):
 * its own after a clean close, the one it carried when it never reached RUNNING, else null.
 */
function previousClose(w: World, c: FakeContainer): Record<string, unknown> | null {
  const bytes = readContainerPath(w, c, statusPath(c));
  if (!bytes) return null;
  let s: Record<string, unknown>;
  try {
    s = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  if (s.state === "CLOSED" && s.exit_code === 143 && s.close_offsets) {
    return {
      close_offsets: s.close_offsets,
      closed_at: s.updated_at ?? null,
      generation: s.generation ?? null,
      plan_sha256: s.plan_sha256 ?? null,
    };
  }
  if (s.running_at === null && s.previous_close) {
    return s.previous_close as Record<string, unknown>;
  }
  return null;
}

/** Start the process of a container that Docker just started. */
export function startProcess(w: World, c: FakeContainer, now: number): void {
  const idle = !isRunner(w, c);
  c.process = {
    phase: idle ? "running" : "starting",
    due_ms: now + (idle ? 0 : w.config.runner_startup_ms),
    member_id: null,
    group_id: null,
    input_topic: null,
    topology: null,
    generation: envOf(c).get("SLUICE_GENERATION") ?? null,
    plan_sha256: null,
    application_id: null,
    started_at: isoAt(now),
    running_at: null,
    planned_exit: null,
    start_offsets: null,
    previous_close: idle ? null : previousClose(w, c),
  };
}

/** The container's process ends: Docker's exited state. */
function exitContainer(w: World, c: FakeContainer, now: number, code: number, oom: boolean) {
  c.state = {
    ...c.state,
    status: "exited",
    running: false,
    exit_code: code,
    oom_killed: oom,
    finished_at: isoAt(now),
  };
  c.process = null;
  logMutation(w, now, "runner", `exit ${code}${oom ? " (OOM)" : ""}`, c.id);
}

function group(w: World, groupId: string): FakeGroup {
  return (w.kafka.groups[groupId] ??= { members: [], offsets: {} });
}

/** Leave the group now (LeaveGroup on close), or stay until the session times out. */
function releaseMember(w: World, p: FakeProcess, now: number, leave: boolean): void {
  if (!p.group_id || !p.member_id) return;
  const g = w.kafka.groups[p.group_id];
  const m = g?.members.find((x) => x.member_id === p.member_id);
  if (!g || !m) return;
  if (leave) g.members = g.members.filter((x) => x !== m);
  else m.expires_ms = now + w.config.session_timeout_ms;
}

/** The output value as Projection.java writes it: the projected columns in SELECT order. */
function project(values: Record<string, Value>, projection: FakeTopology["projection"]): string {
  const json = (v: Value) =>
    v === null ? "null" : typeof v === "string" ? JSON.stringify(v) : String(v);
  return `{${
    projection.map((c) => `${JSON.stringify(c.name)}:${json(values[c.source])}`).join(",")
  }}`;
}

/**
 * The runner processes every record between its committed offsets and the latest ones as one
 * exactly-once transaction (outputs and offsets together): decode strictly, keep the records
 * whose predicate is TRUE, write their projection to the output topic with the input key. A
 * record that does not decode aborts the transaction — nothing of this step is output or
 * committed, so the committed offset stays at or before the bad record — and stops the runner
 * (exit 13, its `DECODE_*` code). A committed offset below the retained records is fatal
 * (exit 15): `auto.offset.reset=none` never resets it.
 */
function processRecords(w: World, c: FakeContainer, p: FakeProcess, now: number): void {
  if (!w.kafka.reachable || !p.group_id || !p.input_topic || !p.topology) return;
  const input = w.kafka.topics[p.input_topic];
  const output = w.kafka.topics[p.topology.output_topic];
  if (!input || !output) return;
  const offsets = (group(w, p.group_id).offsets[p.input_topic] ??= {});
  const outputs: Array<{ key: string | null; value: string }> = [];
  const next: Record<string, string> = {};
  for (const [i, part] of input.partitions.entries()) {
    const from = BigInt(offsets[String(i)] ?? part.earliest);
    if (from < BigInt(part.earliest)) {
      return fail(
        w,
        c,
        p,
        now,
        exitOf(
          15,
          "STREAMS_FATAL",
          `OffsetOutOfRangeException: ${p.input_topic}-${i}@${from} is below the earliest ${part.earliest}`,
        ),
      );
    }
    for (const r of part.records) {
      if (BigInt(r.offset) < from || r.value === null) continue; // tombstones are dropped
      const d = decodeRecord(r.value, p.topology.schema);
      if (!d.ok) {
        const at = `${p.input_topic}-${i}@${r.offset}`;
        return fail(w, c, p, now, {
          ...exitOf(13, d.code, `record ${at}: ${d.message}`),
          stop: decodeStop(p, i, r, d),
        });
      }
      if (evaluate(p.topology.predicate, d.values) === true) {
        outputs.push({ key: r.key, value: project(d.values, p.topology.projection) });
      }
    }
    next[String(i)] = part.latest;
  }
  for (const o of outputs) appendRecord(output, o, now);
  Object.assign(offsets, next);
}

function takeRunnerHook(w: World, c: FakeContainer, on: RunnerHook["on"]): PlannedExit | null {
  const appId = c.labels["sluice.application-id"] ?? c.process?.application_id ?? null;
  const i = w.hooks.findIndex((h) =>
    h.kind === "runner" && h.on === on &&
    (h.match === null || h.match === c.id || h.match === c.name || h.match === appId)
  );
  if (i < 0) return null;
  const h = w.hooks[i] as RunnerHook;
  if (--h.times <= 0) w.hooks.splice(i, 1);
  return h.exit;
}

/** A failed start or a fatal error: FAILED status, the exit code, the group left. */
function fail(w: World, c: FakeContainer, p: FakeProcess, now: number, e: PlannedExit) {
  writeStatus(w, c, p, now, "FAILED", e);
  // Main.java's last stdout line: the exit, its reason and the stop context
  (c.stdout ??= []).push({
    at: isoAt(now),
    line: canonicalJson({
      context: e.stop ?? {},
      detail: e.detail,
      reason: e.reason,
      sluice_runner_exit: e.code,
    }),
  });
  releaseMember(w, p, now, true);
  exitContainer(w, c, now, e.code, e.oom);
}

/**
 * The stop context of a decode failure as the runner writes it: the record's position, sizes and
 * top-level field names, the field and rule that failed — never a value of the record.
 */
function decodeStop(
  p: FakeProcess,
  partition: number,
  r: { offset: string; key: string | null; value: string | null },
  d: { field: string | null; message: string },
): Record<string, unknown> {
  const bytes = (t: string | null) => t === null ? 0 : new TextEncoder().encode(t).length;
  let fields: string[] = [];
  try {
    const doc = JSON.parse(r.value ?? "");
    if (doc !== null && typeof doc === "object" && !Array.isArray(doc)) fields = Object.keys(doc);
  } catch {
    // malformed: no field names readable
  }
  return {
    application_id: p.application_id,
    field: d.field,
    model: p.topology?.model ?? null,
    record: {
      fields,
      key_bytes: bytes(r.key),
      offset: Number(r.offset),
      partition,
      topic: p.input_topic,
      value_bytes: bytes(r.value),
    },
    rule: d.message,
  };
}

function exitOf(code: number, reason: string, detail: string | null): PlannedExit {
  return { code, reason, detail, oom: false };
}

/** Load and check the mounted plan as Plan.load does; an exit when it fails. */
function loadPlan(
  w: World,
  c: FakeContainer,
): { plan: MountedPlan; sha256: string } | PlannedExit {
  const env = envOf(c);
  const path = env.get("SLUICE_PLAN_PATH") ?? RUNNER_DEFAULTS.planPath;
  const bytes = readContainerPath(w, c, path);
  if (bytes === null) return exitOf(10, "PLAN_UNREADABLE", `cannot read ${path}`);
  const sha256 = sha256Hex(bytes);
  const expected = env.get("SLUICE_PLAN_SHA256");
  if (!expected) {
    return exitOf(
      11,
      "PLAN_SHA256_MISSING",
      `SLUICE_PLAN_SHA256 is not set; the plan read has sha256 ${sha256}`,
    );
  }
  if (expected !== sha256) {
    return exitOf(
      11,
      "PLAN_SHA256_MISMATCH",
      `plan sha256 is ${sha256}, SLUICE_PLAN_SHA256 is ${expected}`,
    );
  }
  try {
    return { plan: parseMountedPlan(bytes), sha256 };
  } catch (error) {
    const message = (error as Error).message;
    return /artifact_sha256 does not match/.test(message)
      ? exitOf(11, "ARTIFACT_SHA256_MISMATCH", message)
      : exitOf(10, "PLAN_INVALID", message);
  }
}

/** The identity gate (IdentityGate.java): broker reachable, same cluster and topics, offsets. */
function gate(w: World, plan: MountedPlan): PlannedExit | null {
  const k = w.kafka;
  const reachable = k.reachable &&
    plan.bootstrap_servers.split(",").some((a) => k.internal_listeners.includes(a.trim()));
  if (!reachable) {
    return exitOf(15, "KAFKA_UNREACHABLE", "describeCluster timed out after 30 s");
  }
  if (plan.identity.cluster_id !== k.cluster_id) {
    return exitOf(
      12,
      "IDENTITY_CLUSTER_MISMATCH",
      `cluster ID is ${k.cluster_id}, the plan expects ${plan.identity.cluster_id}`,
    );
  }
  const topics = [
    ["input", plan.artifact.input.topic, plan.identity.input_topic_id],
    ["output", plan.artifact.output.topic, plan.identity.output_topic_id],
  ] as const;
  for (const [, name] of topics) {
    if (!k.topics[name]) {
      return exitOf(12, "IDENTITY_TOPIC_MISSING", `topic ${name} does not exist`);
    }
  }
  for (const [role, name, id] of topics) {
    if (k.topics[name].id !== id) {
      return exitOf(
        12,
        "IDENTITY_TOPIC_MISMATCH",
        `${role} topic ${name} has ID ${k.topics[name].id}, the plan expects ${id}`,
      );
    }
  }
  const input = plan.artifact.input.topic;
  const committed = k.groups[plan.artifact.application_id]?.offsets[input] ?? {};
  const missing = k.topics[input].partitions.map((_, i) => i).filter((i) =>
    committed[String(i)] === undefined
  );
  if (missing.length > 0) {
    return exitOf(
      14,
      "OFFSETS_MISSING",
      `group ${plan.artifact.application_id} has no committed offset for ${
        missing.map((i) => `${input}-${i}`).join(", ")
      }; sluice initializes them before the first start (init-offsets)`,
    );
  }
  return null;
}

/** The runner's verdict: RUNNING with one group member, or a failed exit. */
function verdict(w: World, c: FakeContainer, p: FakeProcess, now: number, ids: IdSource) {
  const loaded = loadPlan(w, c);
  if ("code" in loaded) return fail(w, c, p, now, loaded);
  const { plan, sha256 } = loaded;
  p.plan_sha256 = sha256;
  p.application_id = plan.artifact.application_id;
  writeStatus(w, c, p, now, "STARTING", null);
  const stop = takeRunnerHook(w, c, "start") ?? gate(w, plan);
  if (stop) return fail(w, c, p, now, stop);
  const appId = plan.artifact.application_id;
  p.start_offsets = inputOffsets(w, appId, plan.artifact.input.topic);
  // Streams' process UUID; its default client ID (`<application.id>-<process UUID>`) is replaced
  // by the generation's (ClientId.java) when the runner has one
  const processId = ids.uuid();
  const clientId = `${
    p.generation ? runnerClientId(p.generation) : `${appId}-${processId}`
  }-StreamThread-1-consumer`;
  const member = `${clientId}-${ids.uuid()}`;
  group(w, appId).members.push({
    member_id: member,
    client_id: clientId,
    client_host: `/172.18.0.${2 + (ids.bytes()[0] % 200)}`,
    group_instance_id: null,
    container_id: c.id,
    expires_ms: null,
    topics: [plan.artifact.input.topic],
  });
  p.phase = "running";
  p.member_id = member;
  p.group_id = appId;
  p.input_topic = plan.artifact.input.topic;
  p.topology = {
    model: plan.artifact.model,
    output_topic: plan.artifact.output.topic,
    schema: plan.artifact.schema,
    predicate: plan.artifact.predicate,
    projection: plan.artifact.projection,
  };
  writeStatus(w, c, p, now, "RUNNING", null);
  logMutation(w, now, "runner", "RUNNING", c.id);
}

/** TERM: the shutdown hook (or, before RUNNING, an immediate 143). */
export function termProcess(w: World, c: FakeContainer, now: number): void {
  const p = c.process;
  if (!p || p.phase === "closing") return;
  if (!isRunner(w, c)) {
    p.phase = "closing";
    p.due_ms = now + w.config.runner_close_ms;
    return;
  }
  if (p.phase === "starting") {
    // nothing consumed yet: the status stays at STARTING (when the plan could be read)
    const loaded = loadPlan(w, c);
    if (!("code" in loaded)) {
      p.plan_sha256 = loaded.sha256;
      p.application_id = loaded.plan.artifact.application_id;
      writeStatus(w, c, p, now, "STARTING", null);
    }
    return exitContainer(w, c, now, 143, false);
  }
  p.phase = "closing";
  p.due_ms = now + w.config.runner_close_ms;
  p.planned_exit = takeRunnerHook(w, c, "term");
  writeStatus(w, c, p, now, "CLOSING", null);
}

/** SIGKILL or the kernel's OOM killer: exit 137 at once, nothing written, the member lingers. */
export function killProcess(w: World, c: FakeContainer, now: number, oom: boolean): void {
  const p = c.process;
  if (!p) return;
  releaseMember(w, p, now, false);
  exitContainer(w, c, now, 137, oom);
}

/** A fatal error while running (e.g. exit 13 on an undecodable record): FAILED, group left. */
export function crashProcess(w: World, c: FakeContainer, now: number, e: PlannedExit): void {
  const p = c.process;
  if (!p) return;
  if (!isRunner(w, c)) return exitContainer(w, c, now, e.code, e.oom);
  fail(w, c, p, now, e);
}

function close(w: World, c: FakeContainer, p: FakeProcess, now: number) {
  if (!isRunner(w, c)) return exitContainer(w, c, now, 143, false);
  if (p.planned_exit) {
    // the close did not finish (e.g. CLOSE_TIMEOUT): no LeaveGroup, nothing more committed
    writeStatus(w, c, p, now, "FAILED", p.planned_exit);
    releaseMember(w, p, now, false);
    return exitContainer(w, c, now, p.planned_exit.code, p.planned_exit.oom);
  }
  processRecords(w, c, p, now);
  if (!c.process) return; // it failed while finishing its work
  releaseMember(w, p, now, true);
  writeStatus(w, c, p, now, "CLOSED", {
    code: 143,
    reason: "SIGTERM",
    detail: "closed and committed",
  });
  exitContainer(w, c, now, 143, false);
}

/**
 * Move every simulated process to world time `now`: verdicts and exits that are due, the
 * running runners' progress, and the expiry of members whose process died without leaving.
 */
export function advanceWorld(world: World, now: number, ids: IdSource): void {
  // each daemon's processes on a view of the world from that daemon (its files, its images)
  for (const w of daemonNames(world).map((name) => onDaemon(world, name))) {
    for (const id of Object.keys(w.docker.containers).sort()) {
      const c = w.docker.containers[id];
      const p = c.process;
      if (!p) continue;
      if (p.phase === "starting" && now >= p.due_ms) verdict(w, c, p, now, ids);
      else if (p.phase === "closing" && now >= p.due_ms) close(w, c, p, now);
      if (c.process?.phase === "running" && isRunner(w, c)) processRecords(w, c, c.process, now);
    }
  }
  for (const [groupId, g] of Object.entries(world.kafka.groups)) {
    g.members = g.members.filter((m) => m.expires_ms === null || m.expires_ms > now);
    const hasOffsets = Object.values(g.offsets).some((t) => Object.keys(t).length > 0);
    if (g.members.length === 0 && !hasOffsets) delete world.kafka.groups[groupId];
  }
}
