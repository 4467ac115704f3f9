// Offsets moved while a runner was stopped (issue 18 item 4) on a file-backed fake world whose
// runner writes the status file's offset vectors as the real one does, each command its own OS
// process: plan and status report the move per partition, restart refuses it, and
// `sluice acknowledge-drift` accepts it on the record; a later move is drift again.
import assert from "node:assert/strict";
import { createdStarter } from "../../testing/ways/fake_project.ts";
import { order } from "../../testing/ways/replacement_fixture.ts";

const MODEL = "eligible_orders";

type Moved = { topic: string; partition: number; before: string | null; after: string | null };
type Drift = { kind: string; evidence: string; partitions: Moved[] } | null;
type Blocked = { code: string; evidence?: { blockers?: Array<{ code: string }> } };

Deno.test("offsets moved while the runner was stopped: drift in plan and status, refused by restart, accepted by acknowledge-drift", async () => {
  await using f = await createdStarter("drift-offsets");
  const appId = f.applicationId;
  const name = `sluice-${appId.replace(/^sluice-/, "")}`;
  const project = ["--project", f.p.dir];
  f.world.control.produce(f.p.inputTopic, [order("a1", 150), order("a2", 200), order("a3", 300)]);
  const row = async () =>
    ((await f.cli(["-o", "json", "status", ...project])).json().data!.models as Array<
      { drift: Drift; healthy: boolean }
    >)[0];
  const blockers = async () => {
    const r = await f.cli(["-o", "json", "plan", ...project]);
    const e = r.json().errors[0] as Blocked | undefined;
    return { code: r.code, codes: e?.evidence?.blockers?.map((b) => b.code) ?? [], r };
  };
  assert.equal((await row()).drift, null);

  // a clean stop: the runner's own commit at the close is no drift
  await f.deps.docker.signalTerm(name);
  assert.deepEqual((await blockers()).codes, ["BLOCKED_RUNNER_NOT_RUNNING"]);
  assert.equal((await row()).drift, null);
  const none = await f.cli(["-o", "json", "acknowledge-drift", MODEL, ...project, "--reason", "x"]);
  assert.equal(none.code, 4);
  assert.equal((none.json().errors[0] as Blocked).code, "BLOCKED_NO_DRIFT");
  const committed = await f.deps.kafka.committedOffsets(appId, f.p.inputTopic);
  const [partition, at] = [...committed].sort((a, b) => Number(b[1] - a[1]))[0];
  assert.ok(at > 0n, "the runner consumed");

  // moved back outside sluice while it is stopped
  await f.deps.kafka.setGroupOffsets(appId, f.p.inputTopic, new Map([[partition, 0n]]));
  const moved = { topic: f.p.inputTopic, partition, before: at.toString(), after: "0" };
  const drifted = await blockers();
  assert.equal(drifted.code, 4);
  assert.deepEqual(drifted.codes, ["BLOCKED_RUNNER_NOT_RUNNING", "BLOCKED_RUNNER_DRIFT"]);
  const d = (await row()).drift;
  assert.equal(d?.kind, "offsets_moved_while_stopped");
  assert.equal(d?.evidence, "close_vector");
  assert.deepEqual(d?.partitions, [moved]);
  const refused = await f.cli(["-o", "json", "restart", MODEL, ...project, "--reason", "back"]);
  assert.equal(refused.code, 4);
  assert.equal((refused.json().errors[0] as Blocked).code, "BLOCKED_OFFSETS_MOVED");

  // accepted on the record
  const ack = await f.cli([
    "-o",
    "json",
    "acknowledge-drift",
    MODEL,
    ...project,
    "--reason",
    "replayed on purpose",
  ]);
  assert.equal(ack.code, 0, ack.stdout + ack.stderr);
  const data = ack.json().data as { event_id: string; acknowledged: Drift[] };
  assert.deepEqual(data.acknowledged.map((x) => x?.partitions), [[moved]]);
  const shown = (await f.cli(["-o", "json", "state", "show", ...project])).json().data as {
    history: { envelope_version: number; last_event: string };
  };
  assert.equal(shown.history.last_event, "drift_acknowledged");
  assert.equal(shown.history.envelope_version, 6);
  assert.deepEqual((await blockers()).codes, ["BLOCKED_RUNNER_NOT_RUNNING"]);
  const again = await f.cli([
    "-o",
    "json",
    "acknowledge-drift",
    MODEL,
    ...project,
    "--reason",
    "x",
  ]);
  assert.equal(again.code, 0, "already acknowledged: nothing recorded, exit 0");
  assert.equal((again.json().data as { event_id: string | null }).event_id, null);

  // restart proceeds; the running runner started on the acknowledged offsets: no drift, no-op
  const r = await f.cli(["-o", "json", "restart", MODEL, ...project, "--reason", "after replay"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal((await blockers()).code, 0);
  const healthy = await row();
  assert.equal(healthy.drift, null);
  assert.equal(healthy.healthy, true);
  // running on the acknowledged offsets: the same move, already acknowledged
  const still = await f.cli([
    "-o",
    "json",
    "acknowledge-drift",
    MODEL,
    ...project,
    "--reason",
    "x",
  ]);
  assert.equal(still.code, 0);
  const stillData = still.json().data as {
    event_id: string | null;
    already: Array<{ event_id: string; drift: Drift }>;
  };
  assert.equal(stillData.event_id, null);
  assert.deepEqual(stillData.already.map((a) => a.event_id), [data.event_id]);
  assert.equal(stillData.already[0].drift?.evidence, "start_vector");

  // a later move is a new drift
  await f.deps.docker.signalTerm(name);
  assert.equal((await row()).drift, null);
  // the same move again (the runner had consumed back to where it was): another stop, so not
  // the acknowledged drift
  await f.deps.kafka.setGroupOffsets(appId, f.p.inputTopic, new Map([[partition, 0n]]));
  const later = (await row()).drift;
  assert.equal(later?.kind, "offsets_moved_while_stopped");
  assert.deepEqual(later?.partitions, [moved]);
});

Deno.test("a hand start acknowledged is no longer drift; the next hand start is", async () => {
  await using f = await createdStarter("drift-ack-start");
  const name = `sluice-${f.applicationId.replace(/^sluice-/, "")}`;
  const project = ["--project", f.p.dir];
  await f.deps.docker.signalTerm(name);
  await f.deps.docker.startContainer(name);
  const plan1 = await f.cli(["-o", "json", "plan", ...project]);
  assert.equal(plan1.code, 4);
  const ack = await f.cli(["acknowledge-drift", MODEL, ...project, "--reason", "started by ops"]);
  assert.equal(ack.code, 0, ack.stdout + ack.stderr);
  assert.match(ack.stdout, /started again outside sluice/);
  assert.equal((await f.cli(["-o", "json", "plan", ...project])).code, 0);
  await f.deps.docker.signalTerm(name);
  await f.deps.docker.startContainer(name);
  assert.equal((await f.cli(["-o", "json", "plan", ...project])).code, 4);
});
