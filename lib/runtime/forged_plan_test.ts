// A plan file carries review, not authority (issue 27 items 1 and 2): forged plan files — every
// field that decides what a generic (format-5) apply does — are refused by `sluice apply --plan`
// through the CLI in its own OS process on a file-backed fake world, before anything is mutated
// (the world's log of every Docker and Kafka mutation and the state's bytes are the same
// afterwards). Each forgery is tried twice: re-sealed by someone without the state store's key
// (PLAN_SEAL_FORGED), and re-sealed with the key itself (PLAN_ACTION_MISMATCH naming the action
// and the field: the apply re-derives every action from the compiled project).
import assert from "node:assert/strict";
import { sealPlan, writePlanFile } from "../plan/plan_file.ts";
import { atomicReplace } from "../fs/atomic_write.ts";
import { parseSealKey, type SealKey } from "../state/seal_key.ts";
import type { Plan } from "../plan/plan.ts";
import { canonicalJson, sha256Hex } from "../artifact/canonical.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { verifyPlanBindsProject } from "../plan/bind.ts";
import { compile } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import { SluiceError } from "../errors.ts";
import { apply, plan } from "./session.ts";
import { fakeProject } from "../../testing/ways/fake_project.ts";

/** Replace a plan's artifact of `model` by `edit(artifact)`, re-hashed everywhere it is bound. */
function forgeArtifact(p: Plan, edit: (a: RunnerArtifact) => void): Plan {
  const copy = structuredClone(p);
  const entry = copy.artifacts[0];
  edit(entry.artifact);
  entry.sha256 = sha256Hex(canonicalJson(entry.artifact));
  for (const a of copy.actions) {
    if (a.type === "create_runner" && a.model === entry.model) a.artifact_sha256 = entry.sha256;
  }
  return copy;
}

/** The project's state store key, as someone who can read the state holds it. */
async function storeKey(f: Awaited<ReturnType<typeof fakeProject>>): Promise<SealKey> {
  const path = `${f.p.dir}/.sluice/state/seal-key.json`;
  return parseSealKey(await Deno.readTextFile(path), path);
}

/** Write `plan` as a forger would: sealed with `key`, or (without it) keeping its keyed seal. */
async function forge(path: string, plan: Plan, key?: SealKey): Promise<void> {
  await atomicReplace(path, sealPlan(plan, key).bytes);
}

/** Snapshot of everything an apply could mutate: the world's mutation log and the state files. */
async function mutable(f: Awaited<ReturnType<typeof fakeProject>>) {
  const log = f.world.control.mutations().length;
  const files: Record<string, string> = {};
  const dir = `${f.p.dir}/.sluice/state`;
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile) files[e.name] = await Deno.readTextFile(`${dir}/${e.name}`);
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return { log, files };
}

Deno.test("apply refuses every forged create plan, naming the action and field, and mutates nothing", async () => {
  await using f = await fakeProject("forged-create");
  const created = (await plan({ dir: f.p.dir, ...f.deps })).plan;
  assert.deepEqual(created.blockers, []);
  const forgeries: Array<[string, Plan, RegExp, string?]> = [
    [
      "the predicate edited (paid = FALSE)",
      forgeArtifact(created, (a) => {
        a.predicate = JSON.parse(JSON.stringify(a.predicate).replace("true", "false"));
      }),
      /artifact of model eligible_orders: its field 'predicate' is not the compiled project's/,
    ],
    [
      "a column added to the projection",
      forgeArtifact(created, (a) => {
        a.projection = [...a.projection, a.projection[0]];
      }),
      /its field 'projection'/,
    ],
    [
      "another image",
      forgeArtifact(created, (a) => {
        a.image = `sha256:${"e".repeat(64)}`;
      }),
      /its field 'image'/,
    ],
    [
      "the output topic's partitions",
      (() => {
        const c = structuredClone(created);
        const t = c.actions.find((a) => a.type === "create_topic" && a.role === "output")!;
        if (t.type === "create_topic") t.partitions += 1;
        return c;
      })(),
      /create_topic .*: its partitions are not the declared/,
    ],
    [
      "a topic the project does not declare",
      (() => {
        const c = structuredClone(created);
        c.actions.unshift({ type: "create_topic", topic: "stolen", partitions: 1, role: "output" });
        return c;
      })(),
      /action 1 \(create_topic stolen\): its topic is not a topic the project creates/,
    ],
    [
      "a reviewed replacement relabelled as format 5",
      { ...structuredClone(created), typed_action: { action: {} as never, sha256: "x" } },
      // refused already by the plan file reader (a format-5 file carries no typed action)
      /a format-5 plan carries no typed action/,
      "PLAN_INVALID",
    ],
  ];
  const key = await storeKey(f);
  const refused = async (name: string, forged: Plan, sealKey: SealKey | undefined) => {
    const path = `${f.p.dir}/forged.plan.json`;
    await forge(path, forged, sealKey);
    const before = await mutable(f);
    const r = await f.cli(["-o", "json", "apply", "--project", f.p.dir, "--plan", path]);
    assert.equal(r.code, 3, `${name}: exit ${r.code}\n${r.stdout}${r.stderr}`);
    assert.deepEqual(await mutable(f), before, `${name}: nothing mutated`);
    return r.json().errors[0] as { code: string; message: string };
  };
  for (const [name, forged, message, code = "PLAN_ACTION_MISMATCH"] of forgeries) {
    // without the key: the keyed seal the forgery kept is not the key's seal of its content
    const unkeyed = await refused(`${name} (no key)`, forged, undefined);
    assert.equal(
      unkeyed.code,
      code === "PLAN_INVALID" ? code : "PLAN_SEAL_FORGED",
      `${name}: ${unkeyed.message}`,
    );
    // with the key: the apply still does only what the project says
    const err = await refused(`${name} (key held)`, forged, key);
    assert.equal(err.code, code, `${name}: ${err.message}`);
    assert.match(err.message, message, name);
  }
  // the keyed seal itself: removed, or made with another key
  const { key_seal: _dropped, ...unsealed } = created;
  assert.equal((await refused("no keyed seal", unsealed, undefined)).code, "PLAN_UNSEALED");
  const other: SealKey = { ...key, key_id: crypto.randomUUID() };
  const foreign = await refused("another store's key", created, other);
  assert.equal(foreign.code, "PLAN_SEAL_KEY_UNKNOWN", foreign.message);
  assert.match(foreign.message, new RegExp(other.key_id));
  // the plan as the project made it applies
  const path = `${f.p.dir}/create.plan.json`;
  await writePlanFile(path, created);
  const ok = await f.cli(["-o", "json", "apply", "--project", f.p.dir, "--plan", path]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
});

Deno.test("a removal copied into a no-op plan and re-sealed cannot take down a model the project declares", async () => {
  await using f = await fakeProject("forged-removal");
  // two models: the removal of one is a plan of its own (a project's last model cannot go)
  await f.p.editManifest((t) =>
    t.replace(
      "models:\n",
      `models:\n  spare_orders:\n    sql: models/eligible_orders.sql\n    output:\n      topic: spare_${f.p.outputTopic}\n`,
    )
  );
  const declared = await Deno.readTextFile(`${f.p.dir}/sluice.yaml`);
  const created = (await plan({ dir: f.p.dir, ...f.deps })).plan;
  await apply({ dir: f.p.dir, plan: created, ...f.deps });
  // the removal a project declaring it would plan
  await f.p.editManifest((t) =>
    t.replace(/^ {2}eligible_orders:\n {4}sql: .*\n {4}output:\n {6}topic: .*\n/m, "")
      .replace(/consumes: eligible_orders$/m, "consumes: spare_orders") +
    "lifecycle:\n  runner_removals:\n    - model: eligible_orders\n"
  );
  const removal = (await plan({ dir: f.p.dir, ...f.deps })).plan;
  const remove = removal.actions.find((a) => a.type === "remove_runner");
  assert.ok(remove, JSON.stringify(removal.actions));
  // back to the project that declares the model: a no-op plan, the removal copied into it
  await Deno.writeTextFile(`${f.p.dir}/sluice.yaml`, declared);
  const noop = (await plan({ dir: f.p.dir, ...f.deps })).plan;
  assert.deepEqual(noop.actions, []);
  const path = `${f.p.dir}/forged.plan.json`;
  const key = await storeKey(f);
  for (const sealKey of [undefined, key]) {
    await forge(path, { ...noop, actions: [remove] }, sealKey);
    const before = await mutable(f);
    const r = await f.cli(["-o", "json", "apply", "--project", f.p.dir, "--plan", path]);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.deepEqual(await mutable(f), before, "nothing mutated");
    if (!sealKey) {
      assert.equal(r.json().errors[0].code, "PLAN_SEAL_FORGED");
      continue;
    }
    assert.equal(r.json().errors[0].code, "PLAN_ACTION_MISMATCH");
    assert.match(
      r.json().errors[0].message,
      /remove_runner eligible_orders\): its model is not declared in lifecycle.runner_removals/,
    );
  }
});

Deno.test("a plan the project made binds it: the pure check accepts it and names what differs", async () => {
  await using f = await fakeProject("forged-pure");
  const project = await loadProject(f.p.dir);
  const truth = { project, compiled: compile(project), connectors: () => [] };
  const made = (await plan({ dir: f.p.dir, ...f.deps })).plan;
  verifyPlanBindsProject(made, truth);
  const forged = forgeArtifact(made, (a) => {
    a.input = { topic: "other" };
  });
  // a typed replacement in a generic plan (the file reader refuses it first; the check too)
  assert.throws(
    () =>
      verifyPlanBindsProject(
        { ...made, typed_action: { action: {} as never, sha256: "x" } },
        truth,
      ),
    /its format is 5 but it carries a typed replacement/,
  );
  assert.throws(
    () => verifyPlanBindsProject(forged, truth),
    (e: unknown) =>
      e instanceof SluiceError && e.code === "PLAN_ACTION_MISMATCH" &&
      /'input'/.test(e.message),
  );
});
