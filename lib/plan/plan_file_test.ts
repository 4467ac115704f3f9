// Unit tests of sealed plan files: byte-for-byte round trip, tampering, staleness.
import assert from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { canonicalJson, sha256Hex } from "../artifact/canonical.ts";
import { compile } from "../project/compile.ts";
import { loadProject } from "../project/load.ts";
import { tempStarter } from "../project/_test_project.ts";
import type { StoreIdentity } from "../state/journal.ts";
import type { Plan } from "./plan.ts";
import { planProject, typedActionSha256 } from "./plan.ts";
import type { CurrentContext } from "./plan_file.ts";
import {
  parsePlanBytes,
  readPlanFile,
  sealPlan,
  verifyContinuation,
  verifyPlanCurrent,
  writePlanFile,
} from "./plan_file.ts";

const STORE: StoreIdentity = {
  store_id: "11111111-2222-4333-8444-555555555555",
  backend: "local",
  address: "/tmp/state",
};
const SOURCE = "a".repeat(64);

async function starterPlan(): Promise<Plan> {
  const dir = await tempStarter();
  const project = await loadProject(dir);
  await Deno.remove(dir, { recursive: true });
  const plan = planProject({
    project,
    compiled: compile(project),
    state: { ownership: null, checksum: null, identity: STORE },
    observation: null,
    topics: null,
    now: "2026-11-29T12:00:00.000Z",
    sourceSha256: SOURCE,
  });
  // a blocker with evidence and text that needs escaping, so the round trip covers both
  plan.blockers.push({
    code: "BLOCKED_VOLUME_MISSING",
    model: null,
    message: 'quote " backslash \\ newline \n unicode é ✓',
    evidence: { nested: { list: [1, "2", null, true] } },
  });
  return plan;
}

function current(plan: Plan, over: Partial<CurrentContext> = {}): CurrentContext {
  return {
    project: plan.project,
    environment: plan.environment,
    sourceSha256: plan.source_sha256,
    stateChecksum: plan.protected_state.checksum,
    store: plan.store,
    ...over,
  };
}

function rejects(fn: () => unknown, code: string): SluiceError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SluiceError, String(error));
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}`);
}

Deno.test("plan file: write → read → seal again gives the same bytes", async () => {
  const plan = await starterPlan();
  const dir = await Deno.makeTempDir();
  const path = `${dir}/plan.json`;
  const { sha256 } = await writePlanFile(path, plan);
  const bytes = await Deno.readFile(path);
  const back = await readPlanFile(path);
  assert.equal(back.sha256, sha256);
  assert.deepEqual(back.bytes, bytes);
  assert.deepEqual(back.plan, plan);
  const again = sealPlan(back.plan);
  assert.deepEqual(again.bytes, bytes);
  assert.equal(again.sha256, sha256);
  // the file is canonical JSON: no whitespace, no trailing newline
  assert.equal(
    new TextDecoder().decode(bytes),
    canonicalJson({ ...plan, seal: again.sealed.seal }),
  );
  // writing the read-back plan again gives an identical file
  await writePlanFile(`${dir}/again.json`, back.plan);
  assert.deepEqual(await Deno.readFile(`${dir}/again.json`), bytes);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("plan file: bytes that are not JSON at all are PLAN_UNREADABLE, not an edited plan", () => {
  for (const text of ["", "not a plan", '{"format":5,']) {
    rejects(() => parsePlanBytes(new TextEncoder().encode(text)), "PLAN_UNREADABLE");
  }
  // JSON that is not the canonical bytes is an edit
  rejects(() => parsePlanBytes(new TextEncoder().encode('{ "format": 5 }')), "PLAN_TAMPERED");
});

Deno.test("plan file: one edited byte → PLAN_TAMPERED", async () => {
  const plan = await starterPlan();
  const { bytes } = sealPlan(plan);
  const text = new TextDecoder().decode(bytes);
  // a value changed (still canonical JSON): the seal no longer matches
  const i = text.indexOf('"partitions":3');
  assert.ok(i > 0);
  const edited = new TextEncoder().encode(
    text.slice(0, i) + '"partitions":4' + text.slice(i + '"partitions":3'.length),
  );
  assert.equal(edited.length, bytes.length);
  let differing = 0;
  for (let k = 0; k < bytes.length; k++) if (bytes[k] !== edited[k]) differing++;
  assert.equal(differing, 1);
  rejects(() => parsePlanBytes(edited), "PLAN_TAMPERED");
  // whitespace or a trailing newline is an edit too
  rejects(() => parsePlanBytes(new TextEncoder().encode(text + "\n")), "PLAN_TAMPERED");
  rejects(
    () => parsePlanBytes(new TextEncoder().encode(text.replace('{"actions"', '{ "actions"'))),
    "PLAN_TAMPERED",
  );
  // every single-byte change is caught, whatever byte it is
  for (let k = 0; k < bytes.length; k += 97) {
    const copy = bytes.slice();
    copy[k] = copy[k] === 0x30 ? 0x31 : 0x30;
    assert.throws(() => parsePlanBytes(copy), SluiceError, `byte ${k}`);
  }
  // a re-sealed edit of a format-6 typed action without its checksum is caught as well
  const six = structuredClone(plan);
  const action = {
    type: "replace_runner_predicate" as const,
    model: "eligible_orders",
    application_id: "sluice-orders-eligible_orders",
    prior_artifact_sha256: "1".repeat(64),
    desired_artifact_sha256: "2".repeat(64),
    evidence: { old_container_id: "c".repeat(64) },
  };
  six.format = 6;
  six.actions = [action];
  six.typed_action = { action, sha256: typedActionSha256(action) };
  const ok = parsePlanBytes(sealPlan(six).bytes);
  assert.equal(ok.plan.format, 6);
  six.typed_action = {
    action: { ...action, evidence: { old_container_id: "d".repeat(64) } },
    sha256: typedActionSha256(action),
  };
  rejects(() => parsePlanBytes(sealPlan(six).bytes), "PLAN_TAMPERED");
});

Deno.test("plan file: unreadable, unknown format", async () => {
  await assert.rejects(
    () => readPlanFile("/nonexistent/plan.json"),
    (e: unknown) => e instanceof SluiceError && e.code === "PLAN_UNREADABLE",
  );
  const plan = await starterPlan();
  const odd = { ...plan, format: 4 } as unknown as Plan;
  rejects(() => parsePlanBytes(sealPlan(odd).bytes), "PLAN_INVALID");
});

Deno.test("plan file: verifyPlanCurrent rejects stale source, stale state, another store", async () => {
  const plan = await starterPlan();
  verifyPlanCurrent(plan, current(plan));
  const src = rejects(
    () => verifyPlanCurrent(plan, current(plan, { sourceSha256: "f".repeat(64) })),
    "PLAN_STALE_SOURCE",
  );
  assert.deepEqual(src.evidence, { planned: SOURCE, current: "f".repeat(64) });
  rejects(
    () => verifyPlanCurrent(plan, current(plan, { stateChecksum: "e".repeat(64) })),
    "PLAN_STALE_STATE",
  );
  // the state moved on because an operation applied this very plan: it is named
  const again = rejects(
    () =>
      verifyPlanCurrent(
        plan,
        current(plan, {
          stateChecksum: "e".repeat(64),
          appliedBy: { operation_id: "op-1", recorded_at: "2026-12-01T00:00:00Z" },
        }),
      ),
    "PLAN_ALREADY_APPLIED",
  );
  assert.match(
    again.message,
    /already applied by operation op-1 \(completed 2026-12-01T00:00:00Z\)/,
  );
  // ... also once the sources changed for the next change (the operation is what is acted on)
  rejects(
    () =>
      verifyPlanCurrent(
        plan,
        current(plan, {
          sourceSha256: "f".repeat(64),
          stateChecksum: "e".repeat(64),
          appliedBy: { operation_id: "op-1", recorded_at: "2026-12-01T00:00:00Z" },
        }),
      ),
    "PLAN_ALREADY_APPLIED",
  );
  // an unchanged state is never "already applied"
  verifyPlanCurrent(
    plan,
    current(plan, { appliedBy: { operation_id: "op-1", recorded_at: "2026-12-01T00:00:00Z" } }),
  );
  rejects(
    () =>
      verifyPlanCurrent(
        plan,
        current(plan, { store: { ...STORE, store_id: "99999999-2222-4333-8444-555555555555" } }),
      ),
    "PLAN_WRONG_STORE",
  );
  rejects(
    () => verifyPlanCurrent(plan, current(plan, { project: "other" })),
    "PLAN_WRONG_PROJECT",
  );
  rejects(
    () => verifyPlanCurrent(plan, current(plan, { environment: "prod" })),
    "PLAN_WRONG_PROJECT",
  );
});

Deno.test("plan file: the impact section is sealed; editing what the reviewer saw is tampering", async () => {
  const plan = await starterPlan();
  assert.ok(plan.impact && plan.impact.models.length > 0);
  const { sealed } = sealPlan(plan);
  const edited = structuredClone(sealed);
  edited.impact!.models[0].declared = [];
  assert.throws(
    () => parsePlanBytes(new TextEncoder().encode(canonicalJson(edited))),
    (e) => e instanceof SluiceError && e.code === "PLAN_TAMPERED",
  );
  // a plan file from before the section existed still reads, with no impact
  const { impact: _i, preview: _p, selected: _s, ...older } = plan;
  const olderSealed = { ...older, seal: sha256Hex(canonicalJson(older)) };
  const back = parsePlanBytes(new TextEncoder().encode(canonicalJson(olderSealed)));
  assert.equal(back.plan.impact, null);
  assert.equal(back.plan.selected, null);
});

Deno.test("plan file: a selected plan carrying a replacement is refused, even correctly sealed", async () => {
  const plan = await starterPlan();
  const forged: Plan = {
    ...plan,
    scope: "selected",
    selected: ["eligible_orders"],
    blockers: [],
    actions: [{
      type: "replace_runner_predicate",
      model: "eligible_orders",
      application_id: "sluice-orders-eligible_orders",
      prior_artifact_sha256: "1".repeat(64),
      desired_artifact_sha256: "2".repeat(64),
      evidence: {},
    }],
  };
  assert.throws(
    () => parsePlanBytes(sealPlan(forged).bytes),
    (e) => e instanceof SluiceError && e.code === "PLAN_SELECTED_REPLACEMENT",
  );
});

Deno.test("plan file: verifyContinuation takes only the intent's plan, from the same sources and store", async () => {
  const plan = await starterPlan();
  const sha = "b".repeat(64);
  const pending = {
    what: "runner removal",
    operation_id: "op-7",
    plan_sha256: sha,
    abandon: "sluice state abandon --operation-id op-7 --reason TEXT",
  };
  // the state moved (the operation's own writes): still continuable
  verifyContinuation(plan, sha, current(plan, { stateChecksum: "e".repeat(64) }), pending);
  const other = rejects(
    () => verifyContinuation(plan, "c".repeat(64), current(plan), pending),
    "BLOCKED_OPERATION_PENDING",
  );
  assert.match(other.message, /runner removal op-7 is pending from plan b{64}; continue it/);
  assert.match(other.message, /or abandon it \(sluice state abandon --operation-id op-7/);
  assert.deepEqual(other.evidence, { operation_id: "op-7", plan_sha256: sha });
  const noAbandon = rejects(
    () =>
      verifyContinuation(plan, "c".repeat(64), current(plan), { ...pending, abandon: undefined }),
    "BLOCKED_OPERATION_PENDING",
  );
  assert.doesNotMatch(noAbandon.message, /abandon/);
  const src = rejects(
    () => verifyContinuation(plan, sha, current(plan, { sourceSha256: "f".repeat(64) }), pending),
    "PLAN_STALE_SOURCE",
  );
  assert.match(src.message, /since runner removal op-7 began; restore them to continue it/);
  rejects(
    () =>
      verifyContinuation(plan, sha, current(plan, { store: { ...STORE, store_id: "x" } }), pending),
    "PLAN_WRONG_STORE",
  );
  rejects(
    () => verifyContinuation(plan, sha, current(plan, { project: "another" }), pending),
    "PLAN_WRONG_PROJECT",
  );
});
