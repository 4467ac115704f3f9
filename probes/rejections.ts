/**
 * The rejection catalogue (probes/catalogue.ts), on both state backends: each case tampers with
 * one piece of evidence, runs the public command that would cross the next boundary, and asserts
 * the exact code, the exit status the catalogue gives it (`rejectionExit`: 4, blocked, unless
 * the case says), and — read by independent witnesses, never through sluice — that nothing was
 * mutated: the state documents byte for byte (files or rows read directly), the application's
 * containers (Docker Engine API) and the committed offsets (Kafka's tools) are the same before
 * and after the command.
 *
 * Preflight cases tamper before `apply --plan` (no operation may start). Stopped cases first
 * kill the apply worker at a fault point, tamper while it is dead, then run `state resume`.
 * `wrong-cluster` runs on its own broker, which it replaces by another cluster at the same
 * address. The secured cases (`secure` in the catalogue) share one broker of the probe run's
 * with a SASL_SSL listener (harness/secure_kafka.ts): each deploys its starter over it as
 * sluice's SCRAM admin principal, its runner as a principal of its own with exactly the ACLs its
 * job needs, every credential and the CA file named by variables of the case's own. After the
 * run, the evidence file is searched for every password the secured broker made and every wrong
 * one planted: one found fails the run. Written to `verification/rejections.json`
 * (`SLUICE_VERIFICATION_DIR` overrides).
 *
 *   deno run -A probes/rejections.ts [--only name,name] [--backend local|postgres] [--jobs N]
 *                                    [--allow-dirty]
 * @module
 */
import { randomBytes } from "node:crypto";
import { newKafkaUuid, sharedEnv, startEnv } from "../harness/env.ts";
import type { Env, EnvDescriptor } from "../harness/env.ts";
import { docker, dockerCli } from "../harness/docker.ts";
import { selfSignedCa } from "../harness/tls_certs.ts";
import { committedOffsets, describeCluster, offsetRange, withAdmin } from "../harness/kafka.ts";
import { runnerImageId, type TestProject } from "../harness/project.ts";
import { grantRunnerAcls, securedManifest } from "../harness/secure_kafka.ts";
import {
  AclOperations,
  AclPermissionTypes,
  ResourcePatternTypes,
  ResourceTypes,
} from "npm:@platformatic/kafka@2.12.1";
import type { StateShowView } from "../harness/faults.ts";
import { runWorker } from "../harness/worker.ts";
import { containersOf, kafkaTools } from "../harness/witness.ts";
import type { CaseEvidence } from "./evidence.ts";
import {
  BACKENDS,
  rejectionExit,
  REJECTIONS,
  type RejectionSpec,
  selectedCaseIds,
} from "./catalogue.ts";
import {
  caseEvidence,
  cleanupFailed,
  cli,
  jobs,
  now,
  orders,
  runProbe,
  selectionFlags,
  VERIFICATION_DIR,
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
  /** A secured case's principal, variables and CA file (null on the plaintext broker). */
  secured: SecuredCase | null;
  undo: Array<() => Promise<unknown>>;
}

/** sluice's admin principal on the secured broker (a super user there). */
const SECURE_ADMIN = "sluice-admin";

/** The runner principal of a secured case: its own SCRAM user on the run's secured broker. */
function runnerUser(spec: RejectionSpec, backend: string): string {
  return `runner-of-${spec.name}-${backend}`;
}

/** What a secured case's project names: the variables of the case's own and its CA file. */
interface SecuredCase {
  principal: string;
  vars: { ca: string; admin: string; runner: string };
  caFile: string;
}

/** Every wrong password a tampering planted in this process (searched for in the evidence). */
const PLANTED = new Set<string>();

/** A password no user of the secured broker has, remembered for the evidence search. */
function plantedPassword(): string {
  const p = randomBytes(18).toString("base64url");
  PLANTED.add(p);
  return p;
}

/** `kafka.security` of a secured case, every secret by the name of its variable only. */
function securityYaml(c: SecuredCase): string {
  return `  security:
    protocol: SASL_SSL
    tls:
      ca_file_env: ${c.vars.ca}
    admin:
      sasl_mechanism: SCRAM-SHA-512
      username: ${SECURE_ADMIN}
      password_env: ${c.vars.admin}
    runner:
      sasl_mechanism: SCRAM-SHA-512
      username: ${c.principal}
      password_env: ${c.vars.runner}
`;
}

/**
 * Point a fresh starter at the secured listener before it is deployed: the listeners' CA copied
 * into a file of the project's own, the variables set for the CLI workers and for the SDK in
 * this process (names of the case's own: parallel cases stay apart), the runner principal
 * granted exactly what its job needs (harness/secure_kafka.ts `grantRunnerAcls`).
 */
function securedDeploy(env: Env, c: SecuredCase) {
  return async (project: TestProject, workerEnv: Record<string, string>) => {
    const s = env.secure!;
    c.caFile = `${project.dir}/kafka-ca.pem`;
    await Deno.copyFile(s.caFile, c.caFile);
    const values = {
      [c.vars.ca]: c.caFile,
      [c.vars.admin]: s.passwords[SECURE_ADMIN],
      [c.vars.runner]: s.passwords[c.principal],
    };
    for (const [k, v] of Object.entries(values)) {
      workerEnv[k] = v;
      Deno.env.set(k, v);
    }
    await project.editManifest((t) => securedManifest(t, s, securityYaml(c)));
    await grantRunnerAcls(env.bootstrapHost, `User:${c.principal}`, {
      applicationId: `sluice-${project.name}-eligible_orders`,
      inputTopic: project.inputTopic,
      outputTopic: project.outputTopic,
    });
  };
}

async function sha256(path: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
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

/** The tamperings, one per catalogue entry (probes/rejections_test.ts checks both ways). */
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
  "runner-acl-removed": async (p) => {
    // the runner principal may no longer WRITE its output topic (a literal ALLOW deleted)
    const c = p.secured!;
    const deleted = await withAdmin(p.env.bootstrapHost, (a) =>
      a.deleteAcls({
        filters: [{
          resourceType: ResourceTypes.TOPIC,
          resourceName: p.fx.project.outputTopic,
          resourcePatternType: ResourcePatternTypes.LITERAL,
          principal: `User:${c.principal}`,
          host: "*",
          operation: AclOperations.WRITE,
          permissionType: AclPermissionTypes.ALLOW,
        }] as Parameters<typeof a.deleteAcls>[0]["filters"],
      }));
    return {
      ok: deleted.length === 1,
      detail: {
        deleted: deleted.length,
        principal: `User:${c.principal}`,
        operation: "WRITE",
        topic: p.fx.project.outputTopic,
      },
    };
  },
  "admin-password-wrong": (p) => {
    // the variable the project names for the admin principal's password now holds another
    const v = p.secured!.vars.admin;
    const before = p.fx.workerEnv[v];
    p.fx.workerEnv[v] = plantedPassword();
    return Promise.resolve({
      ok: before !== undefined && p.fx.workerEnv[v] !== before,
      detail: { variable: v },
    });
  },
  "unknown-ca": async (p) => {
    // the project's CA file now holds another CA's certificate (one that signed no listener)
    const c = p.secured!;
    const before = await sha256(c.caFile);
    const dir = await Deno.makeTempDir({ prefix: "sluice-probe-ca-" });
    try {
      await selfSignedCa(dir, "other", "sluice-probe-other-ca");
      await Deno.copyFile(`${dir}/other.pem`, c.caFile);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    const after = await sha256(c.caFile);
    return {
      ok: after !== before,
      detail: { variable: c.vars.ca, sha256_before: before, sha256_after: after },
    };
  },
  "runner-credentials-rotated": (p) => {
    // the variable the project names for the runner principal's password now holds another
    const v = p.secured!.vars.runner;
    const before = p.fx.workerEnv[v];
    p.fx.workerEnv[v] = plantedPassword();
    return Promise.resolve({
      ok: before !== undefined && p.fx.workerEnv[v] !== before,
      detail: { variable: v },
    });
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
  secureEnv: Env | null,
  image: string,
  spec: RejectionSpec,
  backend: "local" | "postgres",
  runId: string,
): Promise<CaseEvidence> {
  const exit = rejectionExit(spec);
  const [boundary, side] = spec.stopAt ? spec.stopAt.split(":") : [null, null];
  return caseEvidence<RejectionState>(
    {
      id: `${spec.name}:${backend}`,
      kind: "rejection",
      run_id: runId,
      boundary,
      side: side as "after" | null,
      backend,
      params: {
        code: spec.code,
        exit,
        stop_at: spec.stopAt,
        tampering: spec.description,
        ...(spec.secure ? { secure: true } : {}),
      },
    },
    async () => {
      if (spec.secure) {
        // on the run's secured broker, as a runner principal and variables of its own
        if (!secureEnv?.secure) throw new Error(`${spec.name} needs the secured broker`);
        const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 12).toUpperCase();
        const secured: SecuredCase = {
          principal: runnerUser(spec, backend),
          vars: {
            ca: `SLUICE_PROBE_KAFKA_CA_FILE_${tag}`,
            admin: `SLUICE_PROBE_KAFKA_ADMIN_PASSWORD_${tag}`,
            runner: `SLUICE_PROBE_KAFKA_RUNNER_PASSWORD_${tag}`,
          },
          caFile: "",
        };
        const unset = () => Object.values(secured.vars).forEach((v) => Deno.env.delete(v));
        try {
          const p = await prepareCase(secureEnv, image, backend, {
            beforeDeploy: securedDeploy(secureEnv, secured),
          });
          return { ...p, ownEnv: null, secured, undo: [() => Promise.resolve(unset())] };
        } catch (e) {
          unset();
          throw e;
        }
      }
      // wrong-cluster replaces its broker: it gets a broker of its own
      const ownEnv = spec.name === "wrong-cluster" ? await startEnv() : null;
      try {
        const p = await prepareCase(ownEnv ?? env, image, backend);
        return { ...p, ownEnv, secured: null, undo: [] };
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
      // refused as the catalogue says: "blocked", whatever its exit status
      p.outcome = r.code === exit ? "blocked" : r.code === 0 ? "completed" : "failed";
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
        name: `the command exits ${exit}${exit === 4 ? " (blocked)" : ""}`,
        kind: "exit-status",
        witness: "process",
        expected: { exit },
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
      await p.fx.cleanup().catch(cleanupFailed);
      for (const u of p.undo) await u().catch(() => {});
      await p.ownEnv?.teardown();
    },
  );
}

/**
 * The secured broker the run's secured cases share: sluice's admin principal (a super user) and
 * each case's runner principal, whose ACLs the case grants.
 */
async function startSecureBroker(principals: string[]): Promise<Env> {
  const t0 = Date.now();
  const env = await startEnv({
    connect: false,
    secure: {
      users: [{ name: SECURE_ADMIN, superUser: true }, ...principals.map((name) => ({ name }))],
    },
  });
  console.log(
    `[rejections] the secured broker for ${principals.length} case(s) started in ${
      ((Date.now() - t0) / 1000).toFixed(1)
    }s`,
  );
  return env;
}

/**
 * Search the written evidence for every password of the secured broker and every wrong one
 * planted: 0 when none is there, 1 (named by its owner, never printed) otherwise.
 */
async function plantedSecretsFound(secure: Env["secure"]): Promise<number> {
  const text = await Deno.readTextFile(`${VERIFICATION_DIR}/rejections.json`);
  const secrets: Array<[string, string]> = [
    ...Object.entries(secure?.passwords ?? {}).map(([u, pw]) => [`${u}'s password`, pw]),
    ...[...PLANTED].map((pw, i) => [`planted wrong password ${i + 1}`, pw]),
  ] as Array<[string, string]>;
  const found = secrets.filter(([, pw]) => text.includes(pw)).map(([who]) => who);
  console.log(
    `[rejections] planted-secret search of the evidence: ${secrets.length} secret(s), ${
      found.length ? `FOUND ${found.join(", ")}` : "none found"
    }`,
  );
  return found.length ? 1 : 0;
}

if (import.meta.main) {
  const env = await sharedEnv();
  const image = await runnerImageId();
  const { selection } = selectionFlags();
  const wanted = new Set(selectedCaseIds("rejections", selection));
  const selected = REJECTIONS.flatMap((spec) =>
    BACKENDS.filter((b) => wanted.has(`${spec.name}:${b}`)).map((b) => ({ spec, backend: b }))
  );
  const secured = selected.filter((c) => c.spec.secure);
  // one secured broker for the run's secured cases (their projects, principals and topics apart)
  const secureEnv = secured.length > 0
    ? await startSecureBroker(secured.map((c) => runnerUser(c.spec, c.backend)))
    : null;
  let status = 1;
  try {
    const cases = selected.map(({ spec, backend }) => ({
      id: `${spec.name}:${backend}`,
      run: (runId: string) => runRejection(env, secureEnv, image, spec, backend, runId),
    }));
    status = await runProbe({ probe: "rejections", env, jobs: jobs(3), selection, cases });
    if (secureEnv && status !== 2) {
      status = Math.max(status, await plantedSecretsFound(secureEnv.secure));
    }
  } finally {
    await secureEnv?.teardown();
  }
  Deno.exit(status);
}
