/**
 * The rejection catalogue: each case tampers with one piece of evidence, runs the public
 * command that would cross the next boundary, and asserts the exact blocker code (exit 4) and
 * that nothing was mutated: ownership (serial, checksum), the pending operation's durable
 * boundary and the application's containers (IDs and states) are the same before and after.
 *
 * Preflight cases tamper before `apply --plan` (no operation may start). Stopped cases first
 * kill the apply worker at a fault point, tamper while it is dead, then run `state resume`.
 * Written to `verification/rejections.json`.
 *
 *   deno run -A probes/rejections.ts [--only name,name]
 * @module
 */
import { sharedEnv } from "../harness/env.ts";
import type { EnvDescriptor } from "../harness/env.ts";
import { docker, dockerCli } from "../harness/docker.ts";
import { committedOffsets, offsetRange, withAdmin } from "../harness/kafka.ts";
import { runnerImageId } from "../harness/project.ts";
import type { HistoryEntry, StateShowView } from "../harness/faults.ts";
import {
  type CaseEvidence,
  cli,
  environmentVersions,
  type Evidence,
  flag,
  inventory,
  now,
  orders,
  summarize,
  VERIFICATION_DIR,
  writeEvidence,
} from "./common.ts";
import { caseEvidence, prepareCase, type Prepared } from "./fault_matrix.ts";

/** A rejection case. */
interface Rejection {
  name: string;
  /** The blocker code the command must report. */
  code: string;
  /** Kill the apply worker here first, tamper while it is dead, then resume (else preflight). */
  stopAt?: string;
  /** The tampering (a nemesis). */
  tamper: (p: Prepared, env: EnvDescriptor) => Promise<unknown>;
  /** Remove what the tampering added outside the fixture (after the assertions' reads). */
  undo?: (p: Prepared) => Promise<void>;
}

async function sh(args: string[]): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: o.code, out: (dec.decode(o.stdout) + dec.decode(o.stderr)).trim() };
}

async function containers(appId: string) {
  const filters = JSON.stringify({ label: [`sluice.application-id=${appId}`] });
  return (await docker().listContainers({ all: true, filters }))
    .map((c) => ({ id: c.Id, state: c.State, operation: c.Labels["sluice.operation-id"] ?? null }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** The old (owned, pre-operation) runner container, if it still exists. */
async function oldRunner(p: Prepared) {
  const c = (await containers(p.fx.applicationId)).find((x) => x.id === p.oldContainerId);
  if (!c) throw new Error("the old runner container is gone");
  return c.id;
}

const CASES: Rejection[] = [
  {
    name: "wrong-mounted-plan",
    code: "BLOCKED_WRONG_MOUNTED_PLAN",
    async tamper(p) {
      const dir = `${p.fx.project.dir}/.sluice/runtime/plans`;
      const files: string[] = [];
      for await (const e of Deno.readDir(dir)) if (e.isFile) files.push(`${dir}/${e.name}`);
      for (const f of files) await Deno.writeTextFile(f, "\n", { append: true });
      return { appended_newline_to: files };
    },
  },
  {
    name: "foreign-generation",
    code: "BLOCKED_FOREIGN_GENERATION",
    async tamper(p, env) {
      const image = (await docker().getContainer(await oldRunner(p)).inspect()).Image;
      const name = `foreign-${p.fx.project.name}`;
      const labels = {
        ...env.labels,
        "sluice.application-id": p.fx.applicationId,
        "sluice.project": p.fx.project.name,
        "sluice.managed-by": "sluice",
      };
      const args = ["create", "--name", name];
      for (const [k, v] of Object.entries(labels)) args.push("--label", `${k}=${v}`);
      return await sh([...args, image]);
    },
  },
  {
    name: "changed-volume-instance",
    code: "BLOCKED_VOLUME_INSTANCE_CHANGED",
    async tamper(p) {
      const f = await Deno.makeTempFile();
      await Deno.writeTextFile(f, crypto.randomUUID());
      const r = await sh(["cp", f, `${await oldRunner(p)}:/var/lib/sluice/instance-id`]);
      await Deno.remove(f);
      return r;
    },
  },
  {
    name: "replaced-topic",
    code: "BLOCKED_TOPIC_REPLACED",
    async tamper(p, env) {
      const topic = p.fx.project.inputTopic;
      await withAdmin(env.bootstrapHost, (a) => a.deleteTopics({ topics: [topic] }));
      for (let i = 0; i < 40; i++) {
        try {
          await withAdmin(
            env.bootstrapHost,
            (a) => a.createTopics({ topics: [topic], partitions: 3, replicas: 1 }),
          );
          return { recreated: topic };
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      throw new Error(`could not recreate ${topic}`);
    },
  },
  {
    name: "wrong-network",
    code: "BLOCKED_WRONG_NETWORK",
    async tamper(p) {
      return await sh(["network", "connect", "bridge", await oldRunner(p)]);
    },
  },
  {
    name: "unclean-exit-sigkill-old-runner",
    code: "BLOCKED_UNCLEAN_EXIT",
    stopAt: "journal.action_started:after",
    async tamper(p) {
      return await sh(["kill", "-s", "KILL", await oldRunner(p)]);
    },
  },
  {
    name: "retention-loss-while-stopped",
    code: "BLOCKED_RETENTION_LOSS",
    stopAt: "journal.old_closed:after",
    async tamper(p, env) {
      await p.fx.produce(orders("r", [150, 250, 350, 450, 550, 650]));
      const topic = p.fx.project.inputTopic;
      const ranges = await offsetRange(env.bootstrapHost, topic, [0, 1, 2]);
      const committed = await committedOffsets(env.bootstrapHost, p.fx.applicationId, topic);
      const past = ranges.filter((r) => r.latest > (committed.get(r.partition) ?? 0n));
      await withAdmin(env.bootstrapHost, (a) =>
        a.deleteRecords({
          topics: [{
            name: topic,
            partitions: past.map((r) => ({ partition: r.partition, offset: r.latest })),
          }],
        }));
      return { deleted_up_to: past.map((r) => [r.partition, r.latest.toString()]) };
    },
  },
  {
    name: "offset-jump-while-stopped",
    code: "BLOCKED_OFFSET_JUMP_WHILE_STOPPED",
    stopAt: "journal.old_closed:after",
    async tamper(p, env) {
      await p.fx.produce(orders("j", [150, 250, 350, 450, 550, 650]));
      const topic = p.fx.project.inputTopic;
      const ranges = await offsetRange(env.bootstrapHost, topic, [0, 1, 2]);
      await withAdmin(env.bootstrapHost, (a) =>
        a.alterConsumerGroupOffsets({
          groupId: p.fx.applicationId,
          topics: [{
            name: topic,
            partitionOffsets: ranges.map((r) => ({ partition: r.partition, offset: r.latest })),
          }],
        }));
      return { committed: ranges.map((r) => [r.partition, r.latest.toString()]) };
    },
  },
  {
    name: "extra-group-member",
    code: "BLOCKED_EXTRA_GROUP_MEMBERS",
    async tamper(p, env) {
      // a second instance of the same runner (same image, plan, application ID; its own
      // volume with the same instance file) joins the group: a stranger sluice does not own
      const old = await docker().getContainer(await oldRunner(p)).inspect();
      const name = `extra-${p.fx.project.name}`;
      const vol = `${name}-state`;
      const planMount = old.Mounts.find((m) => m.Destination === "/etc/sluice/plan.json")!;
      const args = ["create", "--name", name, "--network", old.HostConfig.NetworkMode!];
      for (const [k, v] of Object.entries(env.labels)) args.push("--label", `${k}=${v}`);
      for (const e of old.Config.Env.filter((x) => x.startsWith("SLUICE_"))) args.push("-e", e);
      args.push(
        "-v",
        `${planMount.Source}:/etc/sluice/plan.json:ro`,
        "-v",
        `${vol}:/var/lib/sluice`,
      );
      const created = await sh([...args, old.Config.Image, ...(old.Config.Cmd ?? [])]);
      const f = await Deno.makeTempFile();
      await sh(["cp", `${old.Id}:/var/lib/sluice/instance-id`, f]);
      await sh(["cp", f, `${name}:/var/lib/sluice/instance-id`]);
      await Deno.remove(f);
      const started = await sh(["start", name]);
      let members = 0;
      for (let i = 0; i < 120 && members < 2; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        members = await withAdmin(env.bootstrapHost, async (a) => {
          const g = await a.describeGroups({ groups: [p.fx.applicationId] });
          return g.get(p.fx.applicationId)?.members.size ?? 0;
        }).catch(() => 0);
      }
      return { created: created.code, started: started.code, members };
    },
    async undo(p) {
      await sh(["rm", "-fv", `extra-${p.fx.project.name}`]);
      await sh(["volume", "rm", "-f", `extra-${p.fx.project.name}-state`]);
    },
  },
  {
    name: "oom-then-term",
    code: "BLOCKED_OOM",
    stopAt: "journal.action_started:after",
    async tamper(p) {
      const old = await oldRunner(p);
      // fill the container's memory limit from inside it: the kernel OOM-kills in its cgroup
      const hog = await sh(["exec", old, "sh", "-c", "head -c 4000m /dev/zero | tail"]);
      // then end the runner the clean way: exit 143 alone must not pass for a clean close
      const term = await sh(["kill", "-s", "TERM", old]);
      const wait = await sh(["wait", old]);
      const state = await docker().getContainer(old).inspect();
      return {
        hog_exit: hog.code,
        term: term.code,
        exit: wait.out,
        oom_killed: state.State.OOMKilled,
        exit_code: state.State.ExitCode,
      };
    },
  },
];

interface Frozen {
  serial: number | null;
  state_checksum: string | null;
  operation: string | null;
  last_checkpoint: string | null;
  containers: Array<{ id: string; state: string; operation: string | null }>;
}

async function freeze(p: Prepared, history: HistoryEntry[], proc: string): Promise<Frozen> {
  const r = await cli(
    history,
    proc,
    "state-show",
    ["state", "show", "--project", p.fx.project.dir],
    p.fx.workerEnv,
  );
  const v = r.json?.data as
    | (StateShowView & { ownership: { state_checksum: string } | null })
    | null;
  return {
    serial: v?.ownership?.serial ?? null,
    state_checksum: v?.ownership?.state_checksum ?? null,
    operation: v?.pending_operation?.operation_id ?? null,
    last_checkpoint: v?.pending_operation?.last_checkpoint ?? null,
    containers: await containers(p.fx.applicationId),
  };
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

function runRejection(env: EnvDescriptor, image: string, c: Rejection): Promise<CaseEvidence> {
  return caseEvidence(
    `${c.name}:local`,
    {
      boundary: c.stopAt?.split(":")[0] ?? null,
      side: (c.stopAt?.split(":")[1] ?? null) as "after" | null,
      backend: "local",
    },
    () => prepareCase(env, image, "local"),
    async (p) => {
      const h: HistoryEntry[] = [];
      const apply = ["apply", "--project", p.fx.project.dir, "--plan", p.planPath];
      let command = apply;
      let staleLock: string | null = null;
      if (c.stopAt) {
        h.push({
          process: "worker-1",
          type: "invoke",
          f: "apply",
          value: { fault: c.stopAt },
          time: now(),
        });
        const { runWorker } = await import("../harness/worker.ts");
        const w = await runWorker(["-o", "json", ...apply], {
          fault: c.stopAt,
          env: p.fx.workerEnv,
        });
        h.push({
          process: "worker-1",
          type: "info",
          f: "apply",
          value: { exit: w.code, signal: w.signal, fired: w.fired },
          time: w.endedAt,
        });
        p.a.check("the apply worker died at the fault point", true, w.killedAtFault);
        const show = await cli(h, "cli-1", "state-show", [
          "state",
          "show",
          "--project",
          p.fx.project.dir,
        ], p.fx.workerEnv);
        const v = show.json?.data as StateShowView | null;
        staleLock = v?.lock.stale ? v.lock.holder?.lock_id ?? null : null;
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
      h.push({ process: "nemesis", type: "invoke", f: c.name, value: null, time: now() });
      const what = await c.tamper(p, env);
      h.push({ process: "nemesis", type: "ok", f: c.name, value: what, time: now() });
      const before = await freeze(p, h, "cli-2");
      const r = await cli(
        h,
        "worker-2",
        command[0] === "apply" ? "apply" : "resume",
        command,
        p.fx.workerEnv,
      );
      const after = await freeze(p, h, "cli-3");
      await c.undo?.(p);
      p.a.holds(`blocked with ${c.code} (exit 4)`, { exit: 4, code: c.code }, {
        exit: r.code,
        codes: codesOf(r),
      }, r.code === 4 && codesOf(r).includes(c.code));
      p.a.check(
        "nothing mutated: ownership, durable boundary and containers unchanged",
        before,
        after,
      );
      if (!c.stopAt) {
        p.a.check("no operation was started", null, after.operation);
      }
      return h;
    },
  );
}

if (import.meta.main) {
  const t0 = Date.now();
  const env = await sharedEnv();
  const image = await runnerImageId();
  const only = flag("--only")?.split(",");
  const evidence: Evidence = {
    probe: "rejections",
    schema_version: 1,
    generated_at: now(),
    duration_ms: 0,
    environment: await environmentVersions(env),
    boundary_inventory: inventory(),
    cases: [],
    summary: summarize([]),
  };
  const selected = CASES.filter((c) => !only || only.includes(c.name));
  // --keep-existing: keep passing cases already recorded, run only the others
  const kept: CaseEvidence[] = [];
  if (Deno.args.includes("--keep-existing")) {
    try {
      const old = JSON.parse(
        await Deno.readTextFile(`${VERIFICATION_DIR}/rejections.json`),
      ) as Evidence;
      const wanted = new Set(CASES.map((c) => `${c.name}:local`));
      kept.push(...old.cases.filter((c) => c.ok && wanted.has(c.id)));
    } catch {
      // nothing to keep
    }
    const have = new Set(kept.map((c) => c.id));
    selected.splice(0, selected.length, ...selected.filter((c) => !have.has(`${c.name}:local`)));
  }
  const jobs = Math.max(1, Number(flag("--jobs") ?? Deno.env.get("SLUICE_PROBE_JOBS") ?? "2"));
  const results: CaseEvidence[] = new Array(selected.length);
  let next = 0;
  const worker = async () => {
    while (next < selected.length) {
      const i = next++;
      const r = await runRejection(env, image, selected[i]);
      results[i] = r;
      const bad = r.assertions.filter((x) => !x.ok).map((x) =>
        `${x.name}: ${JSON.stringify(x.actual)}`
      );
      console.log(
        `[rejections] ${r.id}: ${r.ok ? "ok" : "FAILED"} (${(r.duration_ms / 1000).toFixed(1)}s)${
          bad.length ? ` — ${bad.join("; ").slice(0, 600)}` : ""
        }${r.error ? ` — ${r.error.split("\n")[0]}` : ""}`,
      );
      evidence.cases = [...kept, ...results.filter((x) => x !== undefined)];
      evidence.summary = summarize(evidence.cases);
      evidence.duration_ms = Date.now() - t0;
      await writeEvidence(evidence);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, selected.length) }, worker));
  console.log(`[rejections] ${evidence.summary.passed}/${evidence.summary.cases} cases passed`);
  Deno.exit(evidence.summary.failed === 0 ? 0 : 1);
}
