// The helper every reviewed journey opens with: verify the original plan, take the lock, and
// release it and close everything on dispose — including when the journey throws.
import assert from "node:assert/strict";
import type { SluiceError } from "../../errors.ts";
import { compile } from "../../project/compile.ts";
import { loadProject } from "../../project/load.ts";
import { tempStarter } from "../../project/_test_project.ts";
import type { Plan } from "../../plan/plan.ts";
import { typedActionSha256 } from "../../plan/plan.ts";
import { writePlanFile } from "../../plan/plan_file.ts";
import type { RunnerAction } from "../../state/journal.ts";
import { openStateStore } from "../../state/open.ts";
import type { DockerPort } from "../../providers/docker/port.ts";
import type { KafkaPort } from "../../providers/kafka/port.ts";
import { evidenceJson } from "../../validation/reviewed_evidence.ts";
import { openOperation } from "./operation.ts";

// openOperation never touches a provider: any call fails the test
const untouchable = <T extends object>(name: string): T =>
  new Proxy({} as T, {
    get: (_t, key) => () => Promise.reject(new Error(`${name}.${String(key)} was called`)),
  });
const PORTS = {
  docker: untouchable<DockerPort>("docker"),
  kafka: untouchable<KafkaPort>("kafka"),
};

async function project() {
  const dir = await tempStarter();
  const p = await loadProject(dir);
  const a = compile(p).artifacts[0];
  const action: RunnerAction = {
    type: "replace_runner_predicate",
    model: a.model,
    application_id: a.artifact.application_id,
    prior_artifact_sha256: a.sha256,
    desired_artifact_sha256: a.sha256,
    evidence: evidenceJson({
      old_container_id: "a".repeat(64),
      old_container_name: a.artifact.application_id,
      old_generation: null,
      old_plan_sha256: null,
      volume: { name: `${a.artifact.application_id}-state`, instance_id: "v" },
      identities: {
        cluster_id: "C",
        input_topic_id: "I",
        output_topic_id: "O",
        docker_daemon_id: "D",
        image_id: a.artifact.image,
        network_id: "N",
      },
      offsets_lower_bounds: [],
      prior_artifact: a.artifact,
      desired_artifact: a.artifact,
    }),
  };
  const plan = (format: 5 | 6): Plan => ({
    format,
    project: a.artifact.project,
    environment: null,
    mode: "online",
    scope: "full",
    selected: null,
    created_at: "2026-12-01T00:00:00.000Z",
    source_sha256: "0".repeat(64),
    protected_state: { checksum: null, serial: 0 },
    store: { store_id: "s", backend: "local", address: dir },
    artifacts: [{ model: a.model, sha256: a.sha256, artifact: a.artifact }],
    actions: format === 6 ? [action] : [],
    blockers: [],
    typed_action: format === 6 ? { action, sha256: typedActionSha256(action) } : null,
    impact: null,
    preview: null,
  });
  await writePlanFile(`${dir}/reviewed.plan.json`, plan(6));
  await writePlanFile(`${dir}/create.plan.json`, plan(5));
  const store = () =>
    openStateStore({
      backend: "local",
      dir: `${dir}/.sluice/state`,
      project: a.artifact.project,
      environment: null,
    });
  return { dir, action, store };
}

Deno.test("the operation holds the deployment lock until it is disposed, even when the body throws", async () => {
  const { dir, action, store } = await project();
  const observer = store();
  try {
    await assert.rejects(async () => {
      await using op = await openOperation({
        ...PORTS,
        dir,
        planPath: `${dir}/reviewed.plan.json`,
      });
      assert.equal(op.reviewed.action.model, action.model);
      assert.equal((await observer.inspectLock()).held, true);
      // a second journey on the same project waits for nobody: the lock is held
      await assert.rejects(
        () => openOperation({ ...PORTS, dir, planPath: `${dir}/reviewed.plan.json` }),
        (e) => (e as SluiceError).code === "STATE_LOCK_HELD",
      );
      throw new Error("the journey failed");
    }, /the journey failed/);
    assert.equal((await observer.inspectLock()).held, false);
  } finally {
    await observer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a plan that is not a reviewed format-6 plan is refused before the lock is taken", async () => {
  const { dir, store } = await project();
  const observer = store();
  try {
    await assert.rejects(
      () => openOperation({ ...PORTS, dir, planPath: `${dir}/create.plan.json` }),
      (e) => (e as SluiceError).code === "PLAN_NOT_REVIEWED",
    );
    assert.equal((await observer.inspectLock()).held, false);
  } finally {
    await observer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a reviewed plan whose desired artifact is not the current project's is stale", async () => {
  const { dir, store } = await project();
  const observer = store();
  try {
    const sql = `${dir}/models/eligible_orders.sql`;
    await Deno.writeTextFile(
      sql,
      (await Deno.readTextFile(sql)).replace("amount >= 100", "amount >= 300"),
    );
    await assert.rejects(
      () => openOperation({ ...PORTS, dir, planPath: `${dir}/reviewed.plan.json` }),
      (e) => (e as SluiceError).code === "PLAN_STALE_SOURCE",
    );
    assert.equal((await observer.inspectLock()).held, false);
  } finally {
    await observer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the commands printed for an operation name its plan, project and ID", async () => {
  const { dir } = await project();
  try {
    await using op = await openOperation({ ...PORTS, dir, planPath: `${dir}/reviewed.plan.json` });
    const c = op.commands("OP");
    assert.equal(
      c.resume,
      `sluice state resume --project ${dir} --plan ${dir}/reviewed.plan.json --operation-id OP`,
    );
    assert.match(c.status, /^sluice state runner-status --project .* --operation-id OP$/);
    assert.equal(op.candidate("OP").name.endsWith(".op-OP.a0"), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
