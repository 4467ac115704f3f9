/**
 * The rejection catalogue (probes/catalogue.ts), on both state backends: each case tampers with
 * one piece of evidence, runs the public command that would cross the next boundary, and asserts
 * the exact blocker code, exit status 4, and — read by independent witnesses, never through
 * sluice — that nothing was mutated: the state documents byte for byte (files or rows read
 * directly), the application's containers (Docker Engine API) and the committed offsets (Kafka's
 * tools) are the same before and after the command.
 *
 * Preflight cases tamper before `apply --plan` (no operation may start). Stopped cases first
 * kill the apply worker at a fault point, tamper while it is dead, then run `state resume`.
 * `wrong-cluster` runs on its own broker, which it replaces by another cluster at the same
 * address. Written to `verification/rejections.json`.
 *
 *   deno run -A probes/rejections.ts [--only name,name] [--backend local|postgres] [--jobs N]
 *                                    [--allow-dirty]
 * @module
 */
import { newKafkaUuid, sharedEnv, startEnv } from "../harness/env.ts";
import type { Env, EnvDescriptor } from "../harness/env.ts";
import { docker, dockerCli } from "../harness/docker.ts";
import { committedOffsets, describeCluster, offsetRange, withAdmin } from "../harness/kafka.ts";
import { runnerImageId } from "../harness/project.ts";
import type { StateShowView } from "../harness/faults.ts";
import { runWorker } from "../harness/worker.ts";
import { containersOf, kafkaTools } from "../harness/witness.ts";
import type { CaseEvidence } from "./evidence.ts";
import { BACKENDS, REJECTIONS, type RejectionSpec, selectedCaseIds } from "./catalogue.ts";
import {
  caseEvidence,
  cli,
  jobs,
  now,
  orders,
  runProbe,
  selectionFlags,
  waitFor,
} from "./common.ts";
import { prepareCase, type Prepared } from "./invariants.ts";

/** What a tampering reports: whether it did what it meant to, and what it did. */
interface Tampered {
  ok: boolean;
  detail: unknown;
}

/** A rejection case's own environment (wrong-cluster replaces its broker). */
interface RejectionState extends Prepared {
  ownEnv: Env | null;
  undo: Array<() => Promise<unknown>>;
}

type Tamper = (p: RejectionState) => Promise<Tampered>;

async function sh(args: string[]): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: o.code, out: (dec.decode(o.stdout) + dec.decode(o.stderr)).trim() };
}

/** The old (owned, pre-operation) runner container, which must still exist. */
async function oldRunner(p: Prepared): Promise<string> {
  const c = (await containersOf(p.fx.applicationId)).find((x) => x.id === p.oldContainerId);
  if (!c) throw new Error("the old runner container is gone");
  return c.id;
}

async function groupMembers(bootstrap: string, group: string): Promise<number> {
  return await withAdmin(bootstrap, async (a) => {
    const g = await a.describeGroups({ groups: [group] });
    return g.get(group)?.members.size ?? 0;
  }).catch(() => 0);
}

/**
 * An image with the pinned image's content and another ID: built `FROM` it with probe labels
 * only. Its `sluice.image` and `sluice.inputs` labels are overwritten so that nothing looking
 * for the runner image (runner/build.sh --check) can ever pick it up; it is removed with the
 * case. Never `docker commit`: a commit would copy the container's labels and environment.
 */
async function otherImage(p: RejectionState, pinned: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-probe-image-" });
  const tag = `sluice-probe/wrong-image:${p.fx.project.name}`;
  try {
    await Deno.writeTextFile(
      `${dir}/Dockerfile`,
      `FROM ${pinned}\nLABEL sluice.image="probe-wrong-image" sluice.inputs="" sluice.probe.case="${p.fx.project.name}"\n`,
    );
    const built = await new Deno.Command(dockerCli(), {
      args: ["build", "-q", "-t", tag, dir],
      env: { DOCKER_BUILDKIT: "0" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (built.code !== 0) {
      throw new Error(
        `docker build of the wrong image failed: ${new TextDecoder().decode(built.stderr)}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  p.undo.push(() => sh(["rmi", tag]));
  return (await sh(["image", "inspect", "--format", "{{.Id}}", tag])).out;
}

/** Replace container `id` by one identical but for its image; started when `start` is set. */
async function recreateFromOtherImage(
  p: RejectionState,
  id: string,
  start: boolean,
): Promise<Tampered> {
  const old = await docker().getContainer(id).inspect();
  const image = await otherImage(p, old.Image);
  await docker().getContainer(old.Id).remove({ force: true });
  const created = await docker().createContainer({
    name: old.Name.replace(/^\//, ""),
    Image: image,
    Env: old.Config.Env,
    Cmd: old.Config.Cmd ?? undefined,
    Entrypoint: old.Config.Entrypoint ?? undefined,
    Labels: old.Config.Labels,
    StopTimeout: (old.Config as { StopTimeout?: number }).StopTimeout,
    HostConfig: old.HostConfig,
  });
  if (start) {
    await created.start();
    await waitFor(
      "the recreated runner to join its group",
      async () => (await groupMembers(p.env.bootstrapHost, p.fx.applicationId)) >= 1,
    );
  }
  if (id === p.oldContainerId) p.oldContainerId = created.id;
  return {
    ok: image.startsWith("sha256:") && image !== old.Image,
    detail: { pinned: old.Image, now: image, container: created.id },
  };
}

/** The tamperings, one per catalogue entry (a test checks that none is missing). */
export const TAMPER: Record<string, Tamper> = {
  "wrong-mounted-plan": async (p) => {
    const dir = `${p.fx.project.dir}/.sluice/runtime/plans`;
    const files: string[] = [];
    for await (const e of Deno.readDir(dir)) if (e.isFile) files.push(`${dir}/${e.name}`);
    for (const f of files) await Deno.writeTextFile(f, "\n", { append: true });
    return { ok: files.length > 0, detail: { appended_newline_to: files.length } };
  },
  "foreign-generation": async (p) => {
    const image = (await docker().getContainer(await oldRunner(p)).inspect()).Image;
    const labels = {
      ...p.env.labels,
      "sluice.application-id": p.fx.applicationId,
      "sluice.project": p.fx.project.name,
      "sluice.managed-by": "sluice",
    };
    const args = ["create", "--name", `foreign-${p.fx.project.name}`];
    for (const [k, v] of Object.entries(labels)) args.push("--label", `${k}=${v}`);
    const r = await sh([...args, image]);
    return { ok: r.code === 0, detail: { exit: r.code } };
  },
  "changed-volume-instance": async (p) => {
    const f = await Deno.makeTempFile();
    await Deno.writeTextFile(f, crypto.randomUUID());
    const r = await sh(["cp", f, `${await oldRunner(p)}:/var/lib/sluice/instance-id`]);
    await Deno.remove(f);
    return { ok: r.code === 0, detail: { exit: r.code } };
  },
  "replaced-topic": async (p) => {
    const topic = p.fx.project.inputTopic;
    await withAdmin(p.env.bootstrapHost, (a) => a.deleteTopics({ topics: [topic] }));
    for (let i = 0; i < 40; i++) {
      try {
        await withAdmin(
          p.env.bootstrapHost,
          (a) => a.createTopics({ topics: [topic], partitions: 3, replicas: 1 }),
        );
        return { ok: true, detail: { recreated: topic } };
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    return { ok: false, detail: { recreated: null } };
  },
  "wrong-network": async (p) => {
    const r = await sh(["network", "connect", "bridge", await oldRunner(p)]);
    return { ok: r.code === 0, detail: { exit: r.code } };
  },
  "wrong-image": async (p) => {
    // the apply died after creating the candidate and before journaling it: the candidate is
    // replaced, never started, by an identical container of a copy of the pinned image
    const cands = (await containersOf(p.fx.applicationId)).filter((c) => c.id !== p.oldContainerId);
    if (cands.length !== 1) return { ok: false, detail: { candidates: cands.length } };
    const r = await recreateFromOtherImage(p, cands[0].id, false);
    return { ok: r.ok && !cands[0].running, detail: r.detail };
  },
  "wrong-image-under-running-runner": async (p) => {
    const r = await recreateFromOtherImage(p, await oldRunner(p), true);
    return r;
  },
  "wrong-cluster": async (p) => {
    // the broker under the running runner replaced by a new cluster at the same address, the
    // topics recreated there so that the runner keeps running
    const env = p.ownEnv!;
    const b = await docker().getContainer(env.brokerContainerId).inspect();
    const port = b.HostConfig.PortBindings?.["9094/tcp"]?.[0]?.HostPort;
    const cluster = newKafkaUuid();
    await docker().getContainer(b.Id).remove({ force: true, v: true });
    const args = [
      "run",
      "-d",
      "--name",
      `${env.runId}-kafka-replaced`,
      "--network",
      env.network,
      "--network-alias",
      "kafka",
      "--hostname",
      "kafka",
      "-p",
      `${port}:9094`,
      "-e",
      `CLUSTER_ID=${cluster}`,
      "-e",
      `ADVERTISED_LISTENERS=INTERNAL://kafka:9092,EXTERNAL://127.0.0.1:${port}`,
    ];
    for (const [k, v] of Object.entries(env.labels)) args.push("--label", `${k}=${v}`);
    const run = await sh([...args, b.Config.Image]);
    const id = run.out.split("\n").at(-1)!;
    await waitFor("the replacing broker", async () => {
      const logs = await sh(["logs", id]);
      return /Kafka Server started/.test(logs.out);
    });
    p.broker = id;
    const topics = [p.fx.project.inputTopic, p.fx.project.outputTopic];
    await waitFor("the topics on the replacing cluster", async () => {
      await withAdmin(
        p.env.bootstrapHost,
        (a) => a.createTopics({ topics, partitions: 3, replicas: 1 }),
      ).catch(() => {}); // already there after a partial success: the read below decides
      const seen = await describeCluster(p.env.bootstrapHost, topics);
      return topics.every((t) => t in seen.topicIds);
    });
    const seen = await kafkaTools(id, { clusterId: true });
    return {
      ok: run.code === 0 && seen.cluster_id === cluster && cluster !== env.clusterId,
      detail: { reviewed_cluster: env.clusterId, now: seen.cluster_id },
    };
  },
  "unclean-exit-sigkill-old-runner": async (p) => {
    const r = await sh(["kill", "-s", "KILL", await oldRunner(p)]);
    return { ok: r.code === 0, detail: { exit: r.code } };
  },
  "retention-loss-while-stopped": async (p) => {
    await p.fx.produce(orders("r", [150, 250, 350, 450, 550, 650]));
    const topic = p.fx.project.inputTopic;
    const ranges = await offsetRange(p.env.bootstrapHost, topic, [0, 1, 2]);
    const committed = await committedOffsets(p.env.bootstrapHost, p.fx.applicationId, topic);
    const past = ranges.filter((r) => r.latest > (committed.get(r.partition) ?? 0n));
    await withAdmin(p.env.bootstrapHost, (a) =>
      a.deleteRecords({
        topics: [{
          name: topic,
          partitions: past.map((r) => ({ partition: r.partition, offset: r.latest })),
        }],
      }));
    return { ok: past.length > 0, detail: { deleted_up_to: past.map((r) => r.partition) } };
  },
  "offset-jump-while-stopped": async (p) => {
    await p.fx.produce(orders("j", [150, 250, 350, 450, 550, 650]));
    const topic = p.fx.project.inputTopic;
    const ranges = await offsetRange(p.env.bootstrapHost, topic, [0, 1, 2]);
    await withAdmin(p.env.bootstrapHost, (a) =>
      a.alterConsumerGroupOffsets({
        groupId: p.fx.applicationId,
        topics: [{
          name: topic,
          partitionOffsets: ranges.map((r) => ({ partition: r.partition, offset: r.latest })),
        }],
      }));
    return { ok: true, detail: { moved_to_end: ranges.map((r) => r.partition) } };
  },
  "extra-group-member": async (p) => {
    // a second instance of the same runner (same image, plan, application ID; its own volume
    // with the same instance file) joins the group: a stranger sluice does not own
    const old = await docker().getContainer(await oldRunner(p)).inspect();
    const name = `extra-${p.fx.project.name}`;
    const vol = `${name}-state`;
    p.undo.push(() => sh(["rm", "-fv", name]), () => sh(["volume", "rm", "-f", vol]));
    const planMount = old.Mounts.find((m) => m.Destination === "/etc/sluice/plan.json")!;
    const args = ["create", "--name", name, "--network", old.HostConfig.NetworkMode!];
    for (const [k, v] of Object.entries(p.env.labels)) args.push("--label", `${k}=${v}`);
    for (const e of old.Config.Env.filter((x) => x.startsWith("SLUICE_"))) args.push("-e", e);
    args.push("-v", `${planMount.Source}:/etc/sluice/plan.json:ro`, "-v", `${vol}:/var/lib/sluice`);
    const created = await sh([...args, old.Config.Image, ...(old.Config.Cmd ?? [])]);
    const f = await Deno.makeTempFile();
    await sh(["cp", `${old.Id}:/var/lib/sluice/instance-id`, f]);
    await sh(["cp", f, `${name}:/var/lib/sluice/instance-id`]);
    await Deno.remove(f);
    const started = await sh(["start", name]);
    let members = 0;
    await waitFor("the extra member", async () => {
      members = await groupMembers(p.env.bootstrapHost, p.fx.applicationId);
      return members >= 2;
    }).catch(() => {});
    return {
      ok: created.code === 0 && started.code === 0 && members >= 2,
      detail: { members },
    };
  },
  "oom-then-term": async (p) => {
    const old = await oldRunner(p);
    // fill the container's memory limit from inside it: the kernel OOM-kills in its cgroup
    const hog = await sh(["exec", old, "sh", "-c", "head -c 4000m /dev/zero | tail"]);
    // then end the runner the clean way: exit 143 alone must not pass for a clean close
    const term = await sh(["kill", "-s", "TERM", old]);
    await sh(["wait", old]);
    const state = await docker().getContainer(old).inspect();
    return {
      ok: state.State.OOMKilled,
      detail: {
        hog_exit: hog.code,
        term: term.code,
        oom_killed: state.State.OOMKilled,
        exit_code: state.State.ExitCode,
      },
    };
  },
};

/** History events that only record an interruption or a resume authorization (audit). */
const AUDIT_EVENTS = new Set(["incident", "resume_authorized"]);

/**
 * A snapshot of everything a blocked command must not change, read by independent witnesses.
 * Before any operation (preflight) that is every state byte. For an interrupted operation, a
 * resume first records the interruption and its authorization (audit, spec: "must first record
 * its interruption under a newly acquired lock"), so the snapshot holds what is protected: the
 * ownership bytes, the durable boundary (the checkpoints) and the non-audit history events;
 * {@link auditOnly} checks that nothing else was appended.
 */
async function freeze(p: RejectionState, stopped: boolean) {
  const st = await p.fx.state();
  const k = await kafkaTools(p.broker, {
    offsets: { group: p.fx.applicationId, topic: p.fx.project.inputTopic },
  });
  const state = stopped
    ? {
      ownership: st.digests.ownership ?? null,
      serial: st.ownership?.serial ?? null,
      operation: st.control?.operation_id ?? null,
      checkpoints: st.control?.checkpoints ?? null,
      events: st.history.filter((e) => !AUDIT_EVENTS.has(e.kind)),
    }
    : {
      documents: st.documents,
      digests: st.digests,
      serial: st.ownership?.serial ?? null,
      control: st.control,
    };
  return {
    state,
    history: st.history.map((e) => e.kind),
    containers: (await containersOf(p.fx.applicationId)).map((c) => ({
      id: c.id,
      image: c.image,
      state: c.state,
      exit_code: c.exit_code,
      generation: c.labels.generation,
    })),
    offsets: k.offsets ?? {},
  };
}

/** Freeze until two snapshots a few seconds apart agree: what the tampering set in motion settles. */
async function settled(p: RejectionState, stopped: boolean) {
  let last = await freeze(p, stopped);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 1500));
    const next = await freeze(p, stopped);
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
  return last;
}

function codesOf(r: { json: { errors: Array<{ code: string; evidence?: unknown }> } | null }) {
  const out: string[] = [];
  for (const e of r.json?.errors ?? []) {
    out.push(e.code);
    const ev = e.evidence as
      | { blockers?: Array<{ code: string }>; result?: { blockers?: Array<{ code: string }> } }
      | undefined;
    for (const b of ev?.blockers ?? ev?.result?.blockers ?? []) out.push(b.code);
  }
  return [...new Set(out)];
}

function runRejection(
  env: EnvDescriptor,
  image: string,
  spec: RejectionSpec,
  backend: "local" | "postgres",
  runId: string,
): Promise<CaseEvidence> {
  const [boundary, side] = spec.stopAt ? spec.stopAt.split(":") : [null, null];
  return caseEvidence<RejectionState>(
    {
      id: `${spec.name}:${backend}`,
      kind: "rejection",
      run_id: runId,
      boundary,
      side: side as "after" | null,
      backend,
      params: { code: spec.code, stop_at: spec.stopAt, tampering: spec.description },
    },
    async () => {
      // wrong-cluster replaces its broker: it gets a broker of its own
      const ownEnv = spec.name === "wrong-cluster" ? await startEnv() : null;
      try {
        const p = await prepareCase(ownEnv ?? env, image, backend);
        return { ...p, ownEnv, undo: [] };
      } catch (e) {
        await ownEnv?.teardown();
        throw e;
      }
    },
    async (p) => {
      const h = p.history;
      const apply = ["apply", "--project", p.fx.project.dir, "--plan", p.planPath];
      const lineageFile = `${p.fx.project.dir}/lineage.jsonl`;
      let command = apply;
      if (spec.stopAt) {
        h.push({
          process: "worker-1",
          type: "invoke",
          f: "apply",
          value: { args: apply, fault: spec.stopAt },
          time: now(),
        });
        const w = await runWorker(["-o", "json", ...apply], {
          fault: spec.stopAt,
          env: p.fx.workerEnv,
        });
        h.push({
          process: "worker-1",
          type: "info",
          f: "apply",
          value: {
            exit: w.code,
            signal: w.signal,
            fired: w.fired,
            pid: w.pid,
            killed_by: w.killedBy,
            timed_out: w.timedOut,
          },
          time: w.endedAt,
        });
        p.rec.record({
          check: "rejection.stopped_at_site",
          name: "the apply worker died by SIGKILL at the fault point before the tampering",
          kind: "killed-by-signal",
          witness: "process",
          expected: { signal: "SIGKILL", site: spec.stopAt },
          actual: {
            process: "worker-1",
            signal: w.signal,
            fired: w.fired,
            exit: w.code,
            timed_out: w.timedOut,
            killed_by: w.killedBy,
          },
        });
        const show = await cli(h, "cli-1", "state-show", [
          "state",
          "show",
          "--project",
          p.fx.project.dir,
        ], p.fx.workerEnv);
        const v = show.json?.data as StateShowView | null;
        const staleLock = v?.lock.stale ? v.lock.holder?.lock_id ?? null : null;
        command = [
          "state",
          "resume",
          "--project",
          p.fx.project.dir,
          "--plan",
          p.planPath,
          "--operation-id",
          v?.pending_operation?.operation_id ?? "missing",
          ...(staleLock ? ["--break-stale-lock", staleLock] : []),
        ];
      }
      h.push({ process: "nemesis", type: "invoke", f: spec.name, value: null, time: now() });
      const tampered = await TAMPER[spec.name](p);
      h.push({
        process: "nemesis",
        type: tampered.ok ? "ok" : "fail",
        f: spec.name,
        value: tampered.detail,
        time: now(),
      });
      p.rec.recordSetup({
        check: "setup.tampered",
        name: `the tampering took effect: ${spec.description}`,
        kind: "equal",
        witness: "docker-api+kafka-tools",
        expected: true,
        actual: tampered.ok,
      });
      const stopped = spec.stopAt !== null;
      const { history: historyBefore, ...before } = await settled(p, stopped);
      const r = await cli(h, "worker-2", command[0] === "apply" ? "apply" : "resume", [
        ...command,
        "--openlineage",
        lineageFile,
      ], p.fx.workerEnv);
      const { history: historyAfter, ...after } = await freeze(p, stopped);
      const stateWitness = p.fx.backend === "local" ? "state-files" : "state-rows";
      const codes = codesOf(r);
      p.outcome = r.code === 4 ? "blocked" : r.code === 0 ? "completed" : "failed";
      p.rec.record({
        check: "rejection.code",
        name: `blocked with ${spec.code}`,
        kind: "present",
        witness: "sluice",
        expected: [spec.code],
        actual: codes,
      });
      p.rec.record({
        check: "rejection.exit_status",
        name: "the command exits 4 (blocked)",
        kind: "exit-status",
        witness: "process",
        expected: { exit: 4 },
        actual: { exit: r.code, signal: r.signal, timed_out: r.timedOut, process: "worker-2" },
      });
      p.rec.record({
        check: "rejection.nothing_mutated",
        name: "nothing mutated: state bytes, containers and committed offsets unchanged",
        kind: "unchanged",
        witness: `${stateWitness}+docker-api+kafka-tools`,
        expected: before,
        actual: after,
      });
      if (!spec.stopAt) {
        p.rec.record({
          check: "rejection.no_operation",
          name: "no operation was started (no pending control)",
          kind: "absent",
          witness: stateWitness,
          expected: ["control"],
          actual: (after.state as { documents: string[] }).documents,
        });
      } else {
        p.rec.record({
          check: "rejection.audit_only",
          name: "the history grew by audit records only (interruption, resume authorization)",
          kind: "absent",
          witness: stateWitness,
          expected: ["ownership_committed", "runner_completed"],
          actual: historyAfter.slice(historyBefore.length),
        });
      }
      let events: unknown[] = [];
      try {
        events = (await Deno.readTextFile(lineageFile)).trim().split("\n").filter((l) => l)
          .map((l) => JSON.parse(l));
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      if (events.length > 0) {
        p.rec.record({
          check: "lineage.conformant",
          name: "the FAIL event of the blocked command validates against the official schemas",
          kind: "conformant",
          witness: "lineage-file",
          expected: { schema: "OpenLineage 2-0-2 RunEvent + ErrorMessageRunFacet 1-0-1" },
          actual: { events },
        });
      }
    },
    async (p) => {
      // containers first (they hold the probe's image), then what the tampering added
      await p.fx.cleanup().catch(() => {});
      for (const u of p.undo) await u().catch(() => {});
      await p.ownEnv?.teardown();
    },
  );
}

if (import.meta.main) {
  const env = await sharedEnv();
  const image = await runnerImageId();
  const { selection } = selectionFlags();
  const wanted = new Set(selectedCaseIds("rejections", selection));
  const cases = REJECTIONS.flatMap((spec) =>
    BACKENDS.filter((b) => wanted.has(`${spec.name}:${b}`)).map((b) => ({
      id: `${spec.name}:${b}`,
      run: (runId: string) => runRejection(env, image, spec, b, runId),
    }))
  );
  Deno.exit(await runProbe({ probe: "rejections", env, jobs: jobs(3), selection, cases }));
}
