// Day-two operations (issue 18 items 1, 6, 7), tried as an operator would through the CLI, each
// command its own OS process on a file-backed fake world: why a runner stopped (status, plan),
// its logs whatever its container's name, state show in the project directory, a blocked plan
// never written, and a completed plan applied again naming its operation.
import assert from "node:assert/strict";
import { createdStarter } from "../../testing/ways/fake_project.ts";
import { order, reviewedReplacement } from "../../testing/ways/replacement_fixture.ts";

const MODEL = "eligible_orders";

/** The starter created and running on a fake world, with three records processed. */
async function runningStarter(seed: string) {
  const f = await createdStarter(seed);
  f.world.control.produce(f.p.inputTopic, [order("a1", 150), order("a2", 250), order("a3", 50)]);
  return f;
}

type StatusRow = {
  model: string;
  state: string;
  container: string | null;
  generation: string | null;
  healthy: boolean;
  stop: {
    exit_code: number;
    kind: string | null;
    summary: string;
    runner: {
      reason: string;
      model: string | null;
      field: string | null;
      record: {
        topic: string;
        partition: number;
        offset: number;
        value_bytes: number;
        fields: string[];
      } | null;
    } | null;
  } | null;
};

Deno.test("a decode failure: status and plan name the reason, model, partition, offset and the record's shape, never its values; the blocked plan is not written", async () => {
  await using f = await runningStarter("day2-decode");
  const dir = f.p.dir;
  const healthy = (await f.cli(["-o", "json", "status", "--project", dir])).json();
  const before = (healthy.data!.models as StatusRow[])[0];
  assert.equal(before.healthy, true);
  assert.equal(before.stop, null);
  assert.equal(before.container, `sluice-${f.applicationId.replace(/^sluice-/, "")}`);
  // a record whose amount is a string: the runner stops at it (exit 13)
  const secret = "do-not-print-4111111111111111";
  const [bad] = f.world.control.produce(f.p.inputTopic, [{
    key: "k9",
    value: JSON.stringify({ order_id: secret, amount: "lots", paid: true, customer: null }),
  }]);

  const status = await f.cli(["-o", "json", "status", "--project", dir]);
  assert.equal(status.code, 0, status.stderr);
  assert.ok(!status.stdout.includes(secret), "a value of the record is never shown");
  const row = (status.json().data!.models as StatusRow[])[0];
  assert.equal(row.healthy, false);
  assert.equal(row.state, "exited");
  assert.equal(row.container, before.container);
  assert.equal(row.generation, before.generation);
  assert.equal(row.stop?.exit_code, 13);
  assert.equal(row.stop?.kind, "decode");
  assert.equal(row.stop?.runner?.reason, "DECODE_WRONG_TYPE");
  assert.equal(row.stop?.runner?.model, MODEL);
  assert.equal(row.stop?.runner?.field, "amount");
  const record = row.stop?.runner?.record;
  assert.ok(record, "the record's position and shape");
  assert.equal(record.topic, f.p.inputTopic);
  assert.equal(record.offset, Number(bad), "the offset of the bad record in its partition");
  assert.deepEqual(record.fields, ["order_id", "amount", "paid", "customer"]);
  const at = `${f.p.inputTopic}-${record.partition}@${bad}`;
  const text = await f.cli(["status", "--project", dir]);
  assert.match(
    text.stdout,
    new RegExp(
      `stopped: DECODE_WRONG_TYPE \\(exit 13\\) in model ${MODEL} at ${at}`,
    ),
  );
  assert.match(text.stdout, new RegExp(`container=${before.container}`));
  assert.ok(!text.stdout.includes(secret));

  const observed = await f.cli(["observe", "--project", dir]);
  assert.match(
    observed.stdout,
    new RegExp(`\\n    stopped: DECODE_WRONG_TYPE \\(exit 13\\) in model ${MODEL} at ${at}`),
  );
  assert.ok(!observed.stdout.includes(secret));

  const out = `${dir}/blocked.plan.json`;
  const blocked = await f.cli(["plan", "--project", dir, "--out", out]);
  assert.equal(blocked.code, 4, blocked.stderr);
  assert.match(blocked.stderr, /error\[BLOCKED_RUNNER_NOT_RUNNING\]/);
  assert.match(
    blocked.stderr,
    new RegExp(`DECODE_WRONG_TYPE \\(exit 13\\) in model ${MODEL} at ${at}`),
  );
  assert.match(blocked.stderr, /it was not written to .*blocked\.plan\.json/);
  assert.ok(!blocked.stderr.includes(secret) && !blocked.stdout.includes(secret));
  await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
  const json = (await f.cli(["-o", "json", "plan", "--project", dir, "--out", out])).json();
  assert.equal(json.errors[0].code, "BLOCKED_RUNNER_NOT_RUNNING");
  await assert.rejects(Deno.stat(out), Deno.errors.NotFound);
});

Deno.test("a runner killed by someone else: status says exit 137 from the shared table, with no runner reason", async () => {
  await using f = await runningStarter("day2-kill");
  const name = `sluice-${f.applicationId.replace(/^sluice-/, "")}`;
  f.world.control.killContainer(name);
  const row = ((await f.cli(["-o", "json", "status", "--project", f.p.dir])).json().data!
    .models as StatusRow[])[0];
  assert.equal(row.stop?.exit_code, 137);
  assert.equal(row.stop?.kind, "killed");
  assert.equal(
    row.stop?.runner,
    null,
    "a killed runner wrote nothing; its RUNNING status is not a reason",
  );
  assert.match(row.stop!.summary, /^exit 137 \(killed\): SIGKILL/);
});

Deno.test("sluice logs MODEL reads the current generation's lines whatever its name, with --tail and -o json", async () => {
  await using r = await reviewedReplacement("day2-logs");
  const dir = r.p.dir;
  const first = await r.cli(["logs", MODEL, "--project", dir]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^SLUICE_RUNNER_STATE RUNNING /m);
  const tail = await r.cli(["logs", MODEL, "--project", dir, "--tail", "1"]);
  assert.equal(tail.stdout.trim().split("\n").length, 1);
  assert.equal(tail.stdout, first.stdout.trim().split("\n").slice(-1)[0] + "\n");

  // after the replacement the container has the candidate's name; logs follows the generation
  const applied = await r.cli(["-o", "json", "apply", "--project", dir, "--plan", r.planPath]);
  assert.equal(applied.code, 0, applied.stdout + applied.stderr);
  const status = (await r.cli(["-o", "json", "status", "--project", dir])).json().data!;
  const row = (status.models as StatusRow[])[0];
  assert.ok(row.container && row.container !== `sluice-${r.applicationId.replace(/^sluice-/, "")}`);
  const logs = (await r.cli(["-o", "json", "logs", MODEL, "--project", dir])).json();
  assert.equal(logs.ok, true);
  const data = logs.data as {
    container: string;
    generation: string;
    end: string;
    lines: Array<{ line: string }>;
  };
  assert.equal(data.container, row.container);
  assert.equal(data.generation, row.generation);
  assert.equal(data.end, "done");
  assert.ok(
    data.lines.some((l) => l.line.startsWith(`SLUICE_RUNNER_STATE RUNNING ${row.generation} `)),
  );

  const unknown = await r.cli(["logs", "nope", "--project", dir]);
  assert.equal(unknown.code, 3);
  assert.match(unknown.stderr, /PROJECT_MODEL_NOT_FOUND/);
});

Deno.test("a completed replacement plan applied again names the operation that applied it; state show works in the project directory", async () => {
  await using r = await reviewedReplacement("day2-again");
  const dir = r.p.dir;
  const applied = await r.cli(["-o", "json", "apply", "--project", dir, "--plan", r.planPath]);
  assert.equal(applied.code, 0, applied.stdout);
  const operationId = applied.json().data!.operation_id as string;
  assert.match(operationId, /^[0-9a-f-]{36}$/);
  const mutations = r.mutations();
  const again = await r.cli(["apply", "--project", dir, "--plan", r.planPath]);
  assert.equal(again.code, 3);
  assert.match(
    again.stderr,
    new RegExp(
      `error\\[PLAN_ALREADY_APPLIED\\]: this plan was already applied by operation ${operationId}`,
    ),
  );
  assert.equal(r.mutations(), mutations, "nothing was done");

  const shown = await r.cli(["-o", "json", "state", "show"], {}, dir);
  assert.equal(shown.code, 0, shown.stdout + shown.stderr);
  assert.equal(shown.json().data!.project, r.p.name);
  assert.equal(shown.json().data!.pending_operation, null);
});
