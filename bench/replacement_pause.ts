/**
 * Replacement pause: sluice's reviewed predicate replacement against a naive container swap of
 * the same runner image on the same host, alternating pair by pair, plus a cold
 * container-start → RUNNING of the same image as the floor — against two brokers side by side:
 * the test broker (`group.initial.rebalance.delay.ms=0`) and a second environment whose broker
 * has Kafka's default (3000 ms, what most users run; harness/env.ts `brokerProperties`).
 *
 *   deno run -A bench/replacement_pause.ts [--pairs=5] [--brokers=both|test]
 *
 * (a) sluice: the starter project is applied once; each sample flips the filter between
 *     `amount >= 100 AND paid = TRUE` and `amount >= 200 AND paid = TRUE`, plans online, writes
 *     the reviewed plan file and runs `executeReviewed` (what `sluice apply --plan` runs),
 *     timestamping every progress step.
 * (b) naive: a second application of the same image, created like sluice creates a runner
 *     (mounted plan, SLUICE_PLAN_SHA256/SLUICE_GENERATION, same volume and application ID):
 *     `docker stop -t 30`, `docker rm`, `docker create` + `start` with the other plan, then
 *     poll the status file every 100 ms (as sluice does) until RUNNING.
 * (c) floor: a third application whose group is idle: `docker create` + `start` → RUNNING.
 *
 * Every phase is measured from TERM (the daemon's `kill` event) with independent observations:
 * Docker events (die, destroy, create, start), the group state polled every 25 ms, the status
 * file's `running_at` (written by the runner), and the arrival on the output topic of probe
 * records that pass both predicates: one produced right after TERM (the old runner often still
 * processes it before it exits: counted and reported) and one produced as soon as the old
 * container's exit is seen (necessarily processed by the new runner: the resume latency).
 * The sluice side also counts its Docker HTTP requests, port calls and the time spent in them.
 * Pair i runs on each broker in turn; the summary prints sluice/naive and sluice/floor pair by
 * pair for both settings side by side.
 * @module
 */
import { progressLabel } from "../lib/runtime/progress.ts";
import Docker from "dockerode";
import { Producer, stringSerializers } from "@platformatic/kafka";
import { RUN_LABEL, sharedEnv, startEnv } from "../harness/env.ts";
import type { Env, EnvDescriptor } from "../harness/env.ts";
import { starterProject } from "../harness/project.ts";
import type { TestProject } from "../harness/project.ts";
import { loadProject } from "../lib/project/load.ts";
import { compile } from "../lib/project/compile.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import { executeReviewed } from "../lib/runtime/replacement/execute.ts";
import { dockerodePort } from "../lib/providers/docker/dockerode.ts";
import { platformaticKafka } from "../lib/providers/kafka/platformatic.ts";
import { buildMountedPlan, mountedPlanBytes } from "../lib/protocol/mounted_plan.ts";
import { LABEL } from "../lib/runtime/labels.ts";
import { buildRunnerImage } from "../tests/runner_fixture.ts";
import {
  dockerTimeMs,
  environment,
  flags,
  loadavg1,
  max,
  median,
  num,
  sec,
  sleep,
  table,
  until,
  writeResult,
} from "./_common.ts";
import { countingDocker, countingPort, type PortSpan, sum } from "./_count.ts";
import { createRunner, dockerEvents, groupWatcher, outputTail, readStatus } from "./_runner.ts";

const f = flags(Deno.args);
const pairs = Number(f.get("pairs", "5"));
/** `both` (default): the test broker (delay 0) and one with Kafka's default; `test`: only the first. */
const brokers = f.get("brokers", "both");
const PRED = ["amount >= 200 AND paid = TRUE", "amount >= 100 AND paid = TRUE"];
const DELAY = "group.initial.rebalance.delay.ms";

const envInfo = await environment();
const image = await buildRunnerImage();
const d = new Docker();
const port = dockerodePort(d);
const imageEnv = (await port.inspectImage(image))?.env ?? [];

/** One broker setting the three measurements run against. */
interface Broker {
  key: "delay0" | "default";
  label: string;
  env: EnvDescriptor;
  /** Set when this benchmark started the environment (and removes it). */
  owned: Env | null;
}
const brokerList: Broker[] = [{
  key: "delay0",
  label: `${DELAY}=0 (test broker)`,
  env: await sharedEnv(),
  owned: null,
}];
if (brokers === "both") {
  // a second network and broker, as most users run it: the image's settings but Kafka's
  // default initial rebalance delay (3 s)
  const e = await startEnv({ brokerProperties: { [DELAY]: null } });
  brokerList.push({ key: "default", label: `${DELAY} Kafka default (3000)`, env: e, owned: e });
}

/** Setup, the three kinds of sample and their results, against one broker. */
async function prepare(env: EnvDescriptor) {
  const kafka = platformaticKafka(env.bootstrapHost);
  const tag = crypto.randomUUID().slice(0, 6);
  const benchLabel = `replacement_pause-${tag}`;
  const labels = { ...env.labels, "dev.sluice.bench": benchLabel };
  const work = await Deno.makeTempDir({ prefix: "sluice-bench-rp-" });

  /** A hand-managed application of the same image (naive swap and floor). */
  interface ManualApp {
    project: TestProject;
    appId: string;
    volume: string;
    /** Mounted plan files for PRED[0] and PRED[1]. */
    plans: Array<{ path: string; sha256: string }>;
    containerId: string | null;
  }

  async function manualApp(role: string): Promise<ManualApp> {
    const p = await starterProject(env, { image });
    const topics = new Map<string, string>();
    for (const t of [p.inputTopic, p.outputTopic]) topics.set(t, await kafka.createTopic(t, 3));
    const cluster = await kafka.describe([]);
    const plans: ManualApp["plans"] = [];
    let appId = "";
    for (const [i, pred] of PRED.entries()) {
      await p.setPredicate(pred);
      const a = compile(await loadProject(p.dir)).artifacts[0].artifact;
      appId = a.application_id;
      const mounted = buildMountedPlan(a, env.bootstrapInternal, {
        cluster_id: cluster.clusterId,
        input_topic_id: topics.get(p.inputTopic)!,
        output_topic_id: topics.get(p.outputTopic)!,
      });
      const { bytes, sha256 } = mountedPlanBytes(mounted);
      const path = `${work}/${role}-${i}.plan.json`;
      await Deno.writeFile(path, bytes, { mode: 0o644 });
      plans.push({ path, sha256 });
    }
    const volume = `${appId}-state`;
    await d.createVolume({ Name: volume, Labels: labels });
    await kafka.setGroupOffsets(appId, p.inputTopic, new Map([[0, 0n], [1, 0n], [2, 0n]]));
    return { project: p, appId, volume, plans, containerId: null };
  }

  /** Create + start a container of a manual app; wait RUNNING by polling the status file. */
  async function startManual(app: ManualApp, planIdx: number, generation: string) {
    const tCreate = Date.now();
    const id = await createRunner(d, {
      name: `${app.appId}-${generation}`,
      image,
      imageEnv,
      network: env.network,
      planPath: app.plans[planIdx].path,
      planSha256: app.plans[planIdx].sha256,
      generation,
      volume: app.volume,
      labels: { ...labels, [LABEL.applicationId]: app.appId },
    });
    const tCreated = Date.now();
    await d.getContainer(id).start();
    const tStarted = Date.now();
    // same detection as sluice's waitReady: status file through the container, every 100 ms
    const status = await until(
      "RUNNING",
      async () => {
        const s = await readStatus(port.readContainerFile, id);
        if (s?.state === "FAILED") throw new Error(`runner failed: ${JSON.stringify(s)}`);
        return s?.state === "RUNNING" && s.generation === generation ? s : undefined;
      },
      180_000,
      100,
    );
    const tDetected = Date.now();
    app.containerId = id;
    return { id, tCreate, tCreated, tStarted, tDetected, status };
  }

  function probeValue(key: string): string {
    return JSON.stringify({ order_id: key, amount: 500, paid: true, customer: null });
  }

  const producer = new Producer({
    clientId: "sluice-bench-probe",
    bootstrapBrokers: [env.bootstrapHost],
    serializers: stringSerializers,
  });
  async function probe(topic: string, key: string): Promise<number> {
    await producer.send({ messages: [{ topic, key, value: probeValue(key) }] });
    return Date.now();
  }

  const events = await dockerEvents(RUN_LABEL, env.runId);

  /** Produce a probe as soon as the daemon reports the old container's exit. */
  async function probeAfterExit(
    oldId: string,
    since: number,
    topic: string,
    key: string,
  ): Promise<number | null> {
    const die = await events.first(oldId, "die", since, 120_000);
    return die === null ? null : await probe(topic, key);
  }
  const sluiceSamples: Array<Record<string, number | string | null>> = [];
  const naiveSamples: Array<Record<string, number | string | null>> = [];
  const floorSamples: Array<Record<string, number | string | null>> = [];

  // ---- setup: sluice project applied (create), naive app running, floor app idle
  const sp = await starterProject(env, { image });
  await sp.setPredicate(PRED[1]);
  {
    const created = await plan({ dir: sp.dir });
    await apply({
      dir: sp.dir,
      plan: created.plan,
      planSha256: created.sha256,
      extraLabels: labels,
    });
  }
  const sluiceApp = compile(await loadProject(sp.dir)).artifacts[0].artifact.application_id;
  const naive = await manualApp("naive");
  const floor = await manualApp("floor");
  await startManual(naive, 1, "naive-setup");
  // warm the producer (metadata for all input topics)
  for (const t of [sp.inputTopic, naive.project.inputTopic]) await probe(t, `warmup-${t}`);
  const tail = await outputTail(env.bootstrapHost, [sp.outputTopic, naive.project.outputTopic]);
  await until(
    "warm-up records out",
    async () => {
      await Promise.resolve();
      return tail.arrivals.size >= 2 ? true : undefined;
    },
    120_000,
    100,
  );

  const watchSluice = groupWatcher(kafka, sluiceApp, 25);
  const watchNaive = groupWatcher(kafka, naive.appId, 25);

  async function ev(id: string, action: string, since: number): Promise<number | null> {
    return await events.first(id, action, since, 10_000);
  }

  async function runningContainer(appId: string): Promise<string> {
    const list = await port.listContainers(LABEL.applicationId, appId);
    const r = list.filter((c) => c.state.running);
    if (r.length !== 1) throw new Error(`${appId}: ${r.length} running containers`);
    return r[0].id;
  }

  async function sluiceSample(i: number) {
    const pred = PRED[i % 2];
    await sp.setPredicate(pred);
    const tp0 = Date.now();
    const reviewed = await plan({ dir: sp.dir });
    const planMs = Date.now() - tp0;
    if (reviewed.plan.actions[0]?.type !== "replace_runner_predicate") {
      throw new Error(`unexpected plan: ${JSON.stringify(reviewed.plan.actions)}`);
    }
    const planPath = `${sp.dir}/replace-${i}.plan.json`;
    await writePlanFile(planPath, reviewed.plan);
    const oldId = await runningContainer(sluiceApp);
    const key = `probe-sluice-${i}`;
    const steps: Record<string, number> = {};
    let probeAck: Promise<number> | null = null;
    let exitProbe: Promise<number | null> | null = null;
    const dc = countingDocker();
    const calls = new Map<string, number>();
    const dockerMs = new Map<string, number>();
    const kafkaMs = new Map<string, number>();
    const kport = platformaticKafka(env.bootstrapHost);
    const spans: PortSpan[] = [];
    const tCall = Date.now();
    const r = await executeReviewed({
      dir: sp.dir,
      planPath,
      extraLabels: labels,
      docker: countingPort(dockerodePort(dc.client), calls, dockerMs, spans),
      kafka: countingPort(kport, calls, kafkaMs),
      onProgress: (e) => {
        if (e.kind === "wait") return;
        const step = progressLabel(e);
        steps[step] = Date.now();
        if (step === "term") {
          probeAck = probe(sp.inputTopic, key);
          exitProbe = probeAfterExit(oldId, tCall, sp.inputTopic, `${key}-exit`);
        }
      },
    });
    const tReturn = Date.now();
    await kport.close();
    if (!r.committed || r.outcome !== "completed") throw new Error(JSON.stringify(r));
    const newId = await runningContainer(sluiceApp);
    const kill = await ev(oldId, "kill", tCall - 1000);
    const T = kill ?? steps.term;
    const status = await readStatus(port.readContainerFile, newId);
    const out = await tail.waitFor(key, 60_000);
    const rel = (t: number | null | undefined) => (typeof t === "number" ? t - T : null);
    const died = await ev(oldId, "die", tCall);
    return {
      pair: i,
      predicate: pred,
      ...exitToStartRequest(died, spans),
      plan_online_ms: planMs,
      call_to_term_ms: T - tCall,
      exited: rel(died),
      group_empty: rel(await watchSluice.emptySince(T, 60_000)),
      old_closed_recorded: rel(steps.old_closed),
      old_removed: rel(await ev(oldId, "destroy", tCall)),
      removed_recorded: rel(steps.old_removed),
      created: rel(await ev(newId, "create", tCall)),
      created_recorded: rel(steps.replacement_created),
      started: rel(await ev(newId, "start", tCall)),
      jvm_started: rel(status ? dockerTimeMs(String(status.started_at)) : null),
      running: rel(status ? dockerTimeMs(String(status.running_at)) : null),
      running_observed: rel(steps.action_completed),
      returned: rel(tReturn),
      probe_acked: rel(probeAck ? await probeAck : null),
      first_output: rel(out),
      exit_probe_acked: rel(exitProbe ? await exitProbe : null),
      first_output_after_exit: rel(await tail.waitFor(`${key}-exit`, 60_000)),
      docker_requests: sum(dc.counts),
      docker_by_route: JSON.stringify(Object.fromEntries(dc.counts)),
      port_calls: JSON.stringify(Object.fromEntries(calls)),
      observations: calls.get("listContainersLabelled") ?? 0,
      archive_reads: dc.counts.get("GET /containers/{id}/archive") ?? 0,
      blocking_waits: (calls.get("awaitExit") ?? 0) + (calls.get("awaitOutputLine") ?? 0),
      docker_port_ms: sum(dockerMs),
      kafka_port_ms: sum(kafkaMs),
      port_ms_by_method: JSON.stringify(
        Object.fromEntries(
          [...dockerMs, ...kafkaMs].map(([k, v]) => [k, Math.round(v)]),
        ),
      ),
      call_to_return_ms: tReturn - tCall,
      loadavg1: loadavg1(),
    };
  }

  async function naiveSample(i: number) {
    const planIdx = i % 2;
    const oldId = naive.containerId!;
    const key = `probe-naive-${i}`;
    const tCall = Date.now();
    const stopping = d.getContainer(oldId).stop({ t: 30 });
    const probeAck = probe(naive.project.inputTopic, key);
    const exitProbe = probeAfterExit(oldId, tCall, naive.project.inputTopic, `${key}-exit`);
    await stopping;
    await d.getContainer(oldId).remove({ force: false, v: false });
    const tRemoved = Date.now();
    const s = await startManual(naive, planIdx, `naive-${i}`);
    const kill = await ev(oldId, "kill", tCall - 1000);
    const T = kill ?? tCall;
    const out = await tail.waitFor(key, 60_000);
    const rel = (t: number | null | undefined) => (typeof t === "number" ? t - T : null);
    return {
      pair: i,
      predicate: PRED[planIdx],
      call_to_term_ms: T - tCall,
      exited: rel(await ev(oldId, "die", tCall)),
      group_empty: rel(await watchNaive.emptySince(T, 60_000)),
      old_removed: rel(await ev(oldId, "destroy", tCall) ?? tRemoved),
      created: rel(await ev(s.id, "create", tCall)),
      started: rel(await ev(s.id, "start", tCall)),
      jvm_started: rel(dockerTimeMs(String(s.status.started_at))),
      running: rel(dockerTimeMs(String(s.status.running_at))),
      running_observed: rel(s.tDetected),
      returned: rel(s.tDetected),
      probe_acked: rel(await probeAck),
      first_output: rel(out),
      exit_probe_acked: rel(await exitProbe),
      first_output_after_exit: rel(await tail.waitFor(`${key}-exit`, 60_000)),
      loadavg1: loadavg1(),
    };
  }

  async function floorSample(i: number) {
    const s = await startManual(floor, i % 2, `floor-${i}`);
    const created = await ev(s.id, "create", s.tCreate - 1000);
    const T = s.tCreate;
    const rel = (t: number | null | undefined) => (typeof t === "number" ? t - T : null);
    const r = {
      pair: i,
      create_event: rel(created),
      started: rel(await ev(s.id, "start", T - 1000)),
      jvm_started: rel(dockerTimeMs(String(s.status.started_at))),
      running: rel(dockerTimeMs(String(s.status.running_at))),
      running_observed: rel(s.tDetected),
    };
    // stop it outside the measurement, so the group is idle for the next sample
    await d.getContainer(s.id).stop({ t: 30 });
    await d.getContainer(s.id).remove({ force: false, v: false });
    return r;
  }

  return {
    sluiceSample,
    naiveSample,
    floorSample,
    sluiceSamples,
    naiveSamples,
    floorSamples,
    async close() {
      events.stop();
      await watchSluice.stop();
      await watchNaive.stop();
      await tail.close();
      await producer.close();
      // the sluice runner and the manual apps: remove containers and volumes (labelled)
      const all = await d.listContainers({
        all: true,
        filters: JSON.stringify({ label: [`dev.sluice.bench=${benchLabel}`] }),
      });
      for (const c of all) await d.getContainer(c.Id).remove({ force: true }).catch(() => {});
      for (const app of [sluiceApp, naive.appId, floor.appId]) {
        await d.getVolume(`${app}-state`).remove({ force: true }).catch(() => {});
      }
      await kafka.close();
      for (const p of [sp.dir, naive.project.dir, floor.project.dir, work]) {
        await Deno.remove(p, { recursive: true }).catch(() => {});
      }
    },
  };
}

type Prepared = Awaited<ReturnType<typeof prepare>>;
const benches: Array<{ broker: Broker; b: Prepared }> = [];
try {
  for (const broker of brokerList) benches.push({ broker, b: await prepare(broker.env) });
  for (let i = 0; i < pairs; i++) {
    // pair i on each broker, one after the other (so load drift hits both settings alike)
    for (const { broker, b } of benches) {
      // alternate which side goes first, so drift in background load hits both
      const order = i % 2 === 0 ? ["sluice", "naive"] : ["naive", "sluice"];
      for (const side of order) {
        if (side === "sluice") b.sluiceSamples.push(await b.sluiceSample(i));
        else b.naiveSamples.push(await b.naiveSample(i));
        await sleep(1000);
      }
      b.floorSamples.push(await b.floorSample(i));
      const s = b.sluiceSamples[i];
      const n = b.naiveSamples[i];
      console.log(
        `[${broker.key}] pair ${i}: TERM→RUNNING sluice ${sec(s.running as number)} s, naive ${
          sec(n.running as number)
        } s; TERM→output of the probe produced at exit: sluice ${
          sec(s.first_output_after_exit as number)
        } s, naive ${sec(n.first_output_after_exit as number)} s; floor ${
          sec(b.floorSamples[i].running as number)
        } s; load ${s.loadavg1}`,
      );
    }
  }
} finally {
  for (const { b } of benches) await b.close();
  for (const broker of brokerList) if (broker.owned) await broker.owned.teardown();
}

// ---- report, per broker setting, then side by side
const PHASES: Array<[string, string]> = [
  ["exited", "TERM → close returned (container exited)"],
  ["group_empty", "TERM → group Empty"],
  ["old_closed_recorded", "TERM → old_closed recorded (sluice)"],
  ["old_removed", "TERM → old removed"],
  ["created", "TERM → candidate created"],
  ["started", "TERM → started"],
  ["jvm_started", "TERM → JVM main (status STARTING)"],
  ["running", "TERM → RUNNING (status file)"],
  ["running_observed", "TERM → RUNNING observed by the tool"],
  ["first_output", "TERM → output of probe produced at TERM"],
  ["first_output_after_exit", "TERM → output of probe produced at exit"],
];
const DELTAS: Array<[string, string, string]> = [
  ["TERM", "exited", "TERM → container exited (close + JVM exit)"],
  ["exited", "group_empty", "exit → group Empty (negative: Empty first)"],
  ["exited", "old_removed", "exit → old removed (sluice: observe, journal)"],
  ["old_removed", "created", "old removed → candidate created"],
  ["created", "started", "created → started"],
  ["started", "jvm_started", "started → JVM main"],
  ["jvm_started", "running", "JVM main → RUNNING (gate, join)"],
  ["running", "running_observed", "RUNNING → observed by the tool"],
  ["running", "first_output_after_exit", "RUNNING → probe output"],
];

/** The time within [from, to] covered by at least one of the spans (ms). */
function coveredMs(spans: PortSpan[], from: number, to: number): number {
  const parts = spans
    .map((s) => [Math.max(s.start, from), Math.min(s.end, to)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = from;
  for (const [a, b] of parts) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

/**
 * Where sluice's time goes between the old runner's exit (the daemon's die event) and its start
 * request of the candidate (the start call), from the Docker port calls' spans: until its wait
 * for the exit returned, in archive reads, in the remove and create calls, and the rest (the
 * observations' other reads, the decisions, the plan and project re-checks, the journal writes).
 */
function exitToStartRequest(
  died: number | null,
  spans: PortSpan[],
): Record<string, number | null> {
  const start = spans.find((s) => s.method === "startContainer")?.start ?? null;
  const exitSeen = spans.find((s) => s.method === "awaitExit")?.end ?? null;
  if (died === null || start === null || exitSeen === null) {
    return { exit_to_start_request_ms: null };
  }
  const of = (...methods: string[]) => spans.filter((s) => methods.includes(s.method));
  const total = start - died;
  const seen = Math.max(0, exitSeen - died);
  const archive = coveredMs(of("readContainerFile"), exitSeen, start);
  const actions = coveredMs(of("removeContainer", "createContainer"), exitSeen, start);
  return {
    exit_to_start_request_ms: total,
    exit_seen_ms: seen,
    archive_reads_ms: archive,
    archive_reads_n: of("readContainerFile").filter((s) => s.start >= died && s.start < start)
      .length,
    remove_create_ms: actions,
    observations_n: of("listContainersLabelled").filter((s) => s.start >= died && s.start < start)
      .length,
    rest_ms: total - seen - archive - actions,
  };
}

/**
 * Issue 32's targets, on the medians of the pair-by-pair ratios (TERM → RUNNING), on both broker
 * settings (issue 15's were 1.15 and 1.3).
 */
const TARGETS = { sluice_over_naive: 1.05, sluice_over_floor: 1.15 };
const verdict = (value: number | null, target: number) =>
  value === null || Number.isNaN(value)
    ? "not measured"
    : value <= target
    ? "met"
    : `MISSED by ${num(value - target)} (${num((value / target - 1) * 100, 0)} %)`;

function report(broker: Broker, b: Prepared) {
  const { sluiceSamples, naiveSamples, floorSamples } = b;
  console.log(`\n===== broker: ${broker.label} =====`);
  const col = (xs: Array<Record<string, unknown>>, k: string) =>
    xs.map((x) => x[k] as number | null);
  const phaseRows = PHASES.map(([k, label]) => {
    const s = col(sluiceSamples, k);
    const n = col(naiveSamples, k);
    return {
      phase: k,
      label,
      sluice: { median: median(s), max: max(s) },
      naive: { median: median(n), max: max(n) },
    };
  });
  const delta = (xs: Array<Record<string, unknown>>, a: string, b: string) =>
    xs.map((x) => {
      const va = a === "TERM" ? 0 : x[a];
      const vb = x[b];
      return typeof va === "number" && typeof vb === "number" ? vb - va : null;
    });
  const deltaRows = DELTAS.map(([a, b, label]) => ({
    from: a,
    to: b,
    label,
    sluice: { median: median(delta(sluiceSamples, a, b)), max: max(delta(sluiceSamples, a, b)) },
    naive: { median: median(delta(naiveSamples, a, b)), max: max(delta(naiveSamples, a, b)) },
  }));
  const ratio = (k: string) =>
    sluiceSamples.map((s, i) => {
      const a = s[k] as number | null;
      const b = naiveSamples[i]?.[k] as number | null;
      return a !== null && b !== null && b > 0 ? a / b : null;
    });
  const ratios = {
    term_to_running: ratio("running"),
    term_to_running_observed: ratio("running_observed"),
    term_to_first_output: ratio("first_output"),
    term_to_output_after_exit: ratio("first_output_after_exit"),
  };
  const byOld = (xs: Array<Record<string, unknown>>) =>
    xs.filter((x) =>
      typeof x.first_output === "number" && typeof x.exited === "number" &&
      x.first_output < x.exited
    ).length;
  const roundTrips = {
    docker_requests: {
      median: median(col(sluiceSamples, "docker_requests")),
      max: max(col(sluiceSamples, "docker_requests")),
    },
    archive_reads: { median: median(col(sluiceSamples, "archive_reads")) },
    blocking_waits: { median: median(col(sluiceSamples, "blocking_waits")) },
    observations: {
      median: median(col(sluiceSamples, "observations")),
      max: max(col(sluiceSamples, "observations")),
    },
    docker_port_ms: { median: median(col(sluiceSamples, "docker_port_ms")) },
    kafka_port_ms: { median: median(col(sluiceSamples, "kafka_port_ms")) },
    call_to_return_ms: { median: median(col(sluiceSamples, "call_to_return_ms")) },
  };
  const floorSummary = {
    create_to_running: {
      median: median(col(floorSamples, "running")),
      max: max(col(floorSamples, "running")),
    },
    create_to_running_observed: {
      median: median(col(floorSamples, "running_observed")),
      max: max(col(floorSamples, "running_observed")),
    },
    start_to_running: {
      median: median(floorSamples.map((x) => (x.running as number) - (x.started as number))),
      max: max(floorSamples.map((x) => (x.running as number) - (x.started as number))),
    },
  };
  const sluiceOverhead = {
    call_to_term_ms: { median: median(col(sluiceSamples, "call_to_term_ms")) },
    plan_online_ms: { median: median(col(sluiceSamples, "plan_online_ms")) },
  };
  console.log(
    `\nReplacement pause, ${pairs} pairs (seconds from TERM; median / max)\n` +
      table(
        ["phase", "sluice", "naive swap"],
        phaseRows.map((r) => [
          r.label,
          `${sec(r.sluice.median)} / ${sec(r.sluice.max)}`,
          r.phase === "old_closed_recorded" ? "–" : `${sec(r.naive.median)} / ${sec(r.naive.max)}`,
        ]),
      ),
  );
  console.log(
    "\nPer phase (seconds; median / max of each sample's difference)\n" +
      table(
        ["phase", "sluice", "naive swap"],
        deltaRows.map((r) => [
          r.label,
          `${sec(r.sluice.median)} / ${sec(r.sluice.max)}`,
          `${sec(r.naive.median)} / ${sec(r.naive.max)}`,
        ]),
      ),
  );
  const m = (k: string) => median(col(sluiceSamples, k));
  const ms = (k: string) => num(m(k), 0);
  console.log(
    `\nsluice between the old runner's exit and its start request of the candidate (median ms): ${
      ms("exit_to_start_request_ms")
    } (naive: exit → created ${
      num(median(delta(naiveSamples, "exited", "created")), 0)
    }, its start request follows at once); each part's median: its wait for the exit returned ${
      ms("exit_seen_ms")
    } + archive reads ${ms("archive_reads_ms")} (${
      num(m("archive_reads_n"), 0)
    } reads) + remove and create ${ms("remove_create_ms")} + the rest ${ms("rest_ms")} (${
      num(m("observations_n"), 0)
    } observations' other reads, decisions, plan and project re-checks, journal writes)`,
  );
  console.log(
    "\nsluice/naive pair by pair\n" +
      table(
        [
          "pair",
          "TERM→RUNNING",
          "TERM→RUNNING observed",
          "TERM→output (probe at exit)",
        ],
        sluiceSamples.map((_, i) => [
          String(i),
          num(ratios.term_to_running[i]),
          num(ratios.term_to_running_observed[i]),
          num(ratios.term_to_output_after_exit[i]),
        ]).concat([[
          "median",
          num(median(ratios.term_to_running)),
          num(median(ratios.term_to_running_observed)),
          num(median(ratios.term_to_output_after_exit)),
        ]]),
      ),
  );
  // sluice's TERM → RUNNING over the floor's create → RUNNING of the same pair
  const overFloor = sluiceSamples.map((x, i) => {
    const a = x.running as number | null;
    const fl = floorSamples[i]?.running as number | null;
    return a !== null && fl !== null && fl > 0 ? a / fl : null;
  });
  const pauseOverFloor = (median(col(sluiceSamples, "running")) ?? NaN) /
    (floorSummary.create_to_running.median ?? NaN);
  console.log(
    `\nfloor (cold docker create → RUNNING, same image, idle group): ${
      sec(floorSummary.create_to_running.median)
    } / ${sec(floorSummary.create_to_running.max)} s (docker start → RUNNING ${
      sec(floorSummary.start_to_running.median)
    } s); sluice pause / floor = ${num(pauseOverFloor)}; pair by pair: ${
      overFloor.map((x) => num(x)).join(", ")
    }`,
  );
  const overNaive = median(ratios.term_to_running);
  const overFloorMedian = median(overFloor);
  console.log(
    `targets (median pair by pair, TERM → RUNNING, ${broker.label}): sluice/naive ${
      num(overNaive)
    } ≤ ${TARGETS.sluice_over_naive}: ${
      verdict(overNaive, TARGETS.sluice_over_naive)
    }; sluice/floor ${num(overFloorMedian)} ≤ ${TARGETS.sluice_over_floor}: ${
      verdict(overFloorMedian, TARGETS.sluice_over_floor)
    }`,
  );
  console.log(
    `sluice before TERM (not pause): executeReviewed → TERM ${
      sec(sluiceOverhead.call_to_term_ms.median)
    } s; online plan ${sec(sluiceOverhead.plan_online_ms.median)} s`,
  );
  console.log(
    `probe produced at TERM was still processed by the old runner (output before its exit): sluice ${
      byOld(sluiceSamples)
    }/${sluiceSamples.length}, naive ${byOld(naiveSamples)}/${naiveSamples.length}`,
  );
  console.log(
    `sluice replacement I/O (executeReviewed, median): ${roundTrips.docker_requests.median} Docker HTTP requests (max ${roundTrips.docker_requests.max}), ${roundTrips.archive_reads.median} archive reads, ${roundTrips.observations.median} full observations (max ${roundTrips.observations.max}), ${roundTrips.blocking_waits.median} blocking waits; of ${
      sec(roundTrips.call_to_return_ms.median)
    } s, ${sec(roundTrips.docker_port_ms.median)} s in Docker port calls and ${
      sec(roundTrips.kafka_port_ms.median)
    } s in Kafka port calls`,
  );
  return {
    broker: broker.label,
    broker_properties: broker.key === "default" ? { [DELAY]: null } : {},
    samples: { sluice: sluiceSamples, naive: naiveSamples, floor: floorSamples },
    medians: phaseRows,
    phase_medians: deltaRows,
    ratios_sluice_over_naive: ratios,
    ratios_sluice_over_floor: overFloor,
    ratio_medians: {
      term_to_running: median(ratios.term_to_running),
      term_to_running_observed: median(ratios.term_to_running_observed),
      term_to_first_output: median(ratios.term_to_first_output),
      term_to_output_after_exit: median(ratios.term_to_output_after_exit),
      sluice_pause_over_floor: pauseOverFloor,
      sluice_over_floor_pair_by_pair: median(overFloor),
    },
    targets: {
      sluice_over_naive: {
        value: overNaive,
        target: TARGETS.sluice_over_naive,
        verdict: verdict(overNaive, TARGETS.sluice_over_naive),
      },
      sluice_over_floor: {
        value: overFloorMedian,
        target: TARGETS.sluice_over_floor,
        verdict: verdict(overFloorMedian, TARGETS.sluice_over_floor),
      },
    },
    floor: floorSummary,
    sluice_before_term: sluiceOverhead,
    sluice_round_trips: roundTrips,
    sluice_exit_to_start_request_ms: Object.fromEntries(
      [
        "exit_to_start_request_ms",
        "exit_seen_ms",
        "archive_reads_ms",
        "archive_reads_n",
        "remove_create_ms",
        "observations_n",
        "rest_ms",
      ].map((k) => [k, m(k)]),
    ),
    term_probe_processed_by_old: { sluice: byOld(sluiceSamples), naive: byOld(naiveSamples) },
  };
}

const results = benches.map(({ broker, b }) => report(broker, b));
console.log(
  "\nBoth broker settings side by side (median; pair-by-pair ratios, TERM → RUNNING)\n" +
    table(
      ["", ...results.map((r) => r.broker)],
      [
        [
          "sluice TERM → RUNNING (s)",
          ...results.map((r) => sec(r.medians.find((m) => m.phase === "running")?.sluice.median)),
        ],
        [
          "naive TERM → RUNNING (s)",
          ...results.map((r) => sec(r.medians.find((m) => m.phase === "running")?.naive.median)),
        ],
        [
          "floor create → RUNNING (s)",
          ...results.map((r) => sec(r.floor.create_to_running.median)),
        ],
        [
          `sluice/naive, median of pairs (target ≤ ${TARGETS.sluice_over_naive})`,
          ...results.map((r) => num(r.ratio_medians.term_to_running)),
        ],
        [
          `sluice/floor, median of pairs (target ≤ ${TARGETS.sluice_over_floor})`,
          ...results.map((r) => num(r.ratio_medians.sluice_over_floor_pair_by_pair)),
        ],
        ...Array.from({ length: pairs }, (_, i) => [
          `pair ${i}: sluice/naive, sluice/floor`,
          ...results.map((r) =>
            `${num(r.ratios_sluice_over_naive.term_to_running[i])}, ${
              num(r.ratios_sluice_over_floor[i])
            }`
          ),
        ]),
      ],
    ),
);
const path = await writeResult("replacement_pause", {
  name: "replacement_pause",
  environment: envInfo,
  parameters: { pairs, predicates: PRED, group_poll_ms: 25, status_poll_ms: 100, brokers },
  note: "all phase times are milliseconds from TERM (the daemon's kill event of the old container)",
  brokers: results,
});
console.log(`wrote ${path}`);
