// Needs: Docker, the broker, the runner image, PostgreSQL (shared environment from tools/test.ts).
// A lost create response and a lost remove response: the apply worker (the installed CLI, a
// separate OS process) dies by SIGKILL right after the provider call returned; fresh
// processes then run `state runner-status` and `state resume` until the same operation
// completes. On both state backends.
import assert from "node:assert/strict";
import pg from "pg";
import { sharedEnv } from "../harness/env.ts";
import { removeLabelled } from "../harness/docker.ts";
import { committedOffsets, produce, waitForRecords } from "../harness/kafka.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { LABEL } from "../lib/runtime/labels.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const launcher = new URL("../bin/sluice", import.meta.url).pathname;

interface Run {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
}

async function sluice(args: string[], env: Record<string, string>): Promise<Run> {
  const out = await new Deno.Command(launcher, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    signal: out.signal,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

function json(r: Run) {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`not JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
  }
}

async function lostResponse(backend: "local" | "postgres", fault: string) {
  const env = await sharedEnv();
  const dsnVar = "SLUICE_TEST_STATE_DSN";
  const procEnv: Record<string, string> = {};
  if (backend === "postgres") {
    Deno.env.set(dsnVar, env.pgUrl);
    procEnv[dsnVar] = env.pgUrl;
  }
  const p = await starterProject(env, {
    image: await runnerImageId(),
    stateDsnEnv: backend === "postgres" ? dsnVar : undefined,
  });
  const created = await plan({ dir: p.dir });
  const c = await apply({
    dir: p.dir,
    plan: created.plan,
    planSha256: created.sha256,
    extraLabels: env.labels,
  });
  const appId = c.runners[0].application_id;
  try {
    const before = [["a1", 150], ["a2", 250], ["a3", 50]] as const;
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      before.map(([k, amount]) => ({
        key: k,
        value: JSON.stringify({ order_id: k, amount, paid: true, customer: null }),
      })),
    );
    assert.equal(
      (await waitForRecords(env.bootstrapHost, p.outputTopic, 2, { partitions: [0, 1, 2] }))
        .length,
      2,
    );

    await p.setPredicate("amount >= 200 AND paid = TRUE");
    const reviewed = await plan({ dir: p.dir });
    assert.equal(reviewed.plan.format, 6);
    const planPath = `${p.dir}/replace.plan.json`;
    await writePlanFile(planPath, reviewed.plan);

    // 1. the worker dies right after the provider call returned: its response is lost
    const worker = await sluice(["apply", "--project", p.dir, "--plan", planPath], {
      ...procEnv,
      SLUICE_FAULT_POINT: `${fault}:after`,
      SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
    });
    assert.equal(
      worker.signal,
      "SIGKILL",
      `worker should die by SIGKILL: exit ${worker.code}\n${worker.stderr}`,
    );
    assert.match(
      worker.stderr,
      new RegExp(`SLUICE_FAULT_FIRED ${fault.replace(".", "\\.")}:after`),
    );

    // records produced while nothing finishes the operation must not be lost
    const during = [["b1", 300], ["b2", 120]] as const;
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      during.map(([k, amount]) => ({
        key: k,
        value: JSON.stringify({ order_id: k, amount, paid: true, customer: null }),
      })),
    );

    // 2. a fresh process sees the pending operation (and, locally, the dead holder's stale lock)
    const shown =
      json(await sluice(["-o", "json", "state", "show", "--project", p.dir], procEnv)).data;
    const operationId = shown.pending_operation.operation_id as string;
    assert.equal(shown.pending_operation.kind, "runner_update");
    const lockArgs: string[] = [];
    if (backend === "local") {
      assert.equal(shown.lock.stale, true, JSON.stringify(shown.lock));
      lockArgs.push("--break-stale-lock", shown.lock.holder.lock_id);
    } else {
      assert.equal(shown.lock.held, false, "the advisory lock died with the worker's session");
    }
    const common = ["--project", p.dir, "--plan", planPath, "--operation-id", operationId];
    const status = await sluice(
      ["-o", "json", "state", "runner-status", ...common, ...lockArgs],
      procEnv,
    );
    assert.equal(status.code, 0, status.stderr + status.stdout);
    const report = json(status).data;
    const expectedNext = fault === "docker.create_candidate"
      ? ["old_removed", "record"]
      : ["old_closed", "record"];
    assert.deepEqual(
      [report.last_boundary, report.next.step],
      expectedNext,
      JSON.stringify(report.next),
    );

    // 3. resume continues the same operation to completion
    const resumed = await sluice(["-o", "json", "state", "resume", ...common], procEnv);
    assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
    const result = json(resumed).data;
    assert.equal(result.committed, true);
    assert.equal(result.operation_id, operationId);
    assert.equal(result.serial, 2);

    // exact output: a1 (150) before the change passed the old predicate; a2 passes both; b1
    // and b2 were consumed by the candidate, under the new predicate (b2 = 120 is filtered)
    const after = [["c1", 500], ["c2", 199]] as const;
    await produce(
      env.bootstrapHost,
      p.inputTopic,
      after.map(([k, amount]) => ({
        key: k,
        value: JSON.stringify({ order_id: k, amount, paid: true, customer: null }),
      })),
    );
    const got =
      (await waitForRecords(env.bootstrapHost, p.outputTopic, 4, { partitions: [0, 1, 2] }))
        .map((r) => r.key).sort();
    assert.deepEqual(got, ["a1", "a2", "b1", "c1"]);
    const offsets = await committedOffsets(env.bootstrapHost, appId, p.inputTopic);
    assert.equal([...offsets.values()].reduce((x, y) => x + y, 0n), 7n);

    // one candidate of this operation; the incident is kept; a fresh status verifies completion
    const shownAfter =
      json(await sluice(["-o", "json", "state", "show", "--project", p.dir], procEnv)).data;
    assert.equal(shownAfter.pending_operation, null);
    assert.equal(shownAfter.ownership.serial, 2);
    const again = await sluice(["-o", "json", "state", "resume", ...common], procEnv);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(json(again).data.committed, true);
    assert.equal(
      json(await sluice(["-o", "json", "state", "show", "--project", p.dir], procEnv)).data
        .ownership.serial,
      2,
    );
    const noop = json(await sluice(["-o", "json", "plan", "--project", p.dir], procEnv)).data;
    assert.equal(noop.noop, true);
    if (backend === "postgres") {
      const client = new pg.Client({ connectionString: env.pgUrl });
      await client.connect();
      await client.end();
    }
  } finally {
    await removeLabelled(LABEL.applicationId, appId);
  }
}

for (const backend of ["local", "postgres"] as const) {
  Deno.test(
    `${backend}: a lost create response is continued by state resume in a new OS process`,
    opts,
    () => lostResponse(backend, "docker.create_candidate"),
  );
  Deno.test(
    `${backend}: a lost remove response is continued by state resume in a new OS process`,
    opts,
    () => lostResponse(backend, "docker.remove_old"),
  );
}
