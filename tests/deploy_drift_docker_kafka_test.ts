// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// Drift the observer must catch after a successful create, each giving a precise blocker from
// `sluice plan` (exit 4) while nothing is mutated: ownership state keeps its revision, and
// what was drifted by hand stays as it was.
import assert from "node:assert/strict";
import { docker, dockerCli } from "../harness/docker.ts";
import { sharedEnv } from "../harness/env.ts";
import type { Env } from "../harness/env.ts";
import { describeCluster, withAdmin } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import type { TestProject } from "../harness/project.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import type { ApplyResult } from "../lib/runtime/apply_context.ts";
import { openStateStore } from "../lib/state/open.ts";
import type { StateStore } from "../lib/state/store.ts";
import { assertExit, sluiceJson } from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

interface Deployed {
  env: Env;
  p: TestProject;
  applied: ApplyResult;
  store: StateStore;
  revision: string;
}

/** A starter project created through the SDK (labelled with the test run for tear-down). */
async function deployed(): Promise<Deployed> {
  const env = await sharedEnv();
  const p = await starterProject(env, { image: await runnerImageId() });
  const applied = await apply({ dir: p.dir, extraLabels: env.labels });
  assert.equal(applied.noop, false);
  const store = openStateStore({
    backend: "local",
    dir: `${p.dir}/.sluice/state`,
    project: p.name,
    environment: null,
  });
  const revision = (await store.load()).revision;
  return { env, p, applied, store, revision };
}

/** `sluice -o json plan` is blocked (exit 4) with these codes; returns every blocker code. */
async function blockedPlan(d: Deployed): Promise<string[]> {
  const r = await sluiceJson(["plan", "--project", d.p.dir]);
  assertExit(r, 4);
  assert.equal(r.envelope.ok, false);
  const blockers = r.envelope.errors[0].evidence?.blockers as Array<{ code: string }>;
  assert.equal(r.envelope.errors[0].code, blockers[0].code);
  // nothing was written
  assert.equal((await d.store.load()).revision, d.revision);
  return blockers.map((b) => b.code);
}

async function docker_(args: string[]): Promise<string> {
  const out = await new Deno.Command(dockerCli(), { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, `docker ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout).trim();
}

Deno.test(
  "drift: a foreign container with the owned application-ID label → BLOCKED_FOREIGN_GENERATION",
  opts,
  async () => {
    const d = await deployed();
    try {
      const appId = d.applied.runners[0].application_id;
      const image = await runnerImageId();
      const foreign = await docker_([
        "create",
        "--name",
        `${appId}-intruder`,
        "--label",
        `sluice.application-id=${appId}`,
        ...Object.entries(d.env.labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]),
        "--network",
        "none",
        image,
      ]);
      const codes = await blockedPlan(d);
      assert.deepEqual(codes, ["BLOCKED_FOREIGN_GENERATION"]);
      // the SDK plan names both containers in the evidence
      const sdk = await plan({ dir: d.p.dir });
      const ids = (sdk.plan.blockers[0].evidence?.containers as Array<{ id: string }>).map((c) =>
        c.id
      ).sort();
      assert.deepEqual(ids, [foreign, d.applied.runners[0].container_id].sort());
      // nothing was touched: both containers are as they were
      const owned = await docker().getContainer(d.applied.runners[0].container_id).inspect();
      assert.equal(owned.State.Running, true);
      const intruder = await docker().getContainer(foreign).inspect();
      assert.equal(intruder.State.Status, "created");
    } finally {
      await d.store.close();
    }
  },
);

Deno.test(
  "drift: the state volume replaced under the same name and labels → BLOCKED_VOLUME_INSTANCE_CHANGED once a container mounts it",
  opts,
  async () => {
    const d = await deployed();
    try {
      const r = d.applied.runners[0];
      const volume = `${r.application_id}-state`;
      const labels = (await docker().getVolume(volume).inspect()).Labels ?? {};
      assert.equal(labels["sluice.volume-instance"], r.volume_instance);
      const original = await docker().getContainer(r.container_id).inspect();
      // stop and remove the runner by hand, then replace its volume with a look-alike
      await docker_(["stop", "--time", "30", r.container_id]);
      await docker_(["rm", r.container_id]);
      await docker_(["volume", "rm", volume]);
      await docker_([
        "volume",
        "create",
        ...Object.entries(labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]),
        volume,
      ]);
      // nothing mounts the look-alike: observing creates nothing to read its instance file
      // (docs/decisions.md D11), so its label, which matches, is the only volume evidence; the
      // plan is blocked by the missing runner
      assert.deepEqual(await blockedPlan(d), ["BLOCKED_RUNNER_MISSING"]);
      const before = await plan({ dir: d.p.dir });
      assert.equal(before.observation?.runners[0].volume.instanceFileVia, null);
      // the runner recreated by hand exactly as sluice created it, on the look-alike: its own
      // mount shows that the instance file is not there
      const twin = await docker().createContainer({
        name: original.Name.replace(/^\//, ""),
        Image: original.Image,
        Labels: original.Config.Labels,
        Env: original.Config.Env,
        // dockerode's types leave out Config.StopTimeout, which sluice sets
        StopTimeout: (original.Config as { StopTimeout?: number }).StopTimeout,
        HostConfig: {
          Binds: original.HostConfig.Binds,
          NetworkMode: original.HostConfig.NetworkMode,
          RestartPolicy: original.HostConfig.RestartPolicy,
          Memory: original.HostConfig.Memory,
        },
      });
      const codes = await blockedPlan(d);
      assert.deepEqual(codes.sort(), [
        "BLOCKED_RUNNER_NOT_RUNNING",
        "BLOCKED_VOLUME_INSTANCE_CHANGED",
      ]);
      // the look-alike carries the owned instance label, but not the instance file
      const sdk = await plan({ dir: d.p.dir });
      const ev = sdk.plan.blockers.find((b) => b.code === "BLOCKED_VOLUME_INSTANCE_CHANGED")!
        .evidence;
      assert.deepEqual(ev, {
        expected: r.volume_instance,
        label: r.volume_instance,
        file: null,
        fileVia: twin.id,
        viaContainer: null,
      });
      // still nothing created by sluice: the twin is the only container with the application ID
      const left = await docker().listContainers({
        all: true,
        filters: JSON.stringify({ label: [`sluice.application-id=${r.application_id}`] }),
      });
      assert.deepEqual(left.map((c) => c.Id), [twin.id]);
      assert.equal((await twin.inspect()).State.Status, "created", "the twin was not started");
    } finally {
      await d.store.close();
    }
  },
);

Deno.test(
  "drift: the input topic deleted and recreated (new topic ID) → BLOCKED_TOPIC_REPLACED",
  opts,
  async () => {
    const d = await deployed();
    try {
      const before = await describeCluster(d.env.bootstrapHost, [d.p.inputTopic]);
      await withAdmin(
        d.env.bootstrapHost,
        (admin) => admin.deleteTopics({ topics: [d.p.inputTopic] }),
      );
      // deletion completes asynchronously: recreate until the broker accepts the name again
      let created = false;
      for (let i = 0; i < 100 && !created; i++) {
        try {
          await withAdmin(
            d.env.bootstrapHost,
            (admin) => admin.createTopics({ topics: [d.p.inputTopic], partitions: 3, replicas: 1 }),
          );
          created = true;
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      assert.ok(created, "the input topic could not be recreated");
      const after = await describeCluster(d.env.bootstrapHost, [d.p.inputTopic]);
      assert.notEqual(after.topicIds[d.p.inputTopic], before.topicIds[d.p.inputTopic]);

      const codes = await blockedPlan(d);
      assert.equal(codes[0], "BLOCKED_TOPIC_REPLACED");
      // the runner's own check agrees; whatever else the runner did after losing its topic
      // (it may stop, its offsets may be gone) is reported too, but never as an action
      assert.ok(codes.filter((c) => c === "BLOCKED_TOPIC_REPLACED").length >= 2, codes.join());
      const sdk = await plan({ dir: d.p.dir });
      assert.deepEqual(sdk.plan.actions, []);
      const replaced = sdk.plan.blockers.find((b) => b.code === "BLOCKED_TOPIC_REPLACED")!;
      assert.deepEqual(replaced.evidence, {
        topic: d.p.inputTopic,
        observed: after.topicIds[d.p.inputTopic],
        owned: before.topicIds[d.p.inputTopic],
      });
    } finally {
      await d.store.close();
    }
  },
);
