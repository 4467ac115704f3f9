// Needs: Docker, the broker, the runner image, PostgreSQL (shared environment from tools/test.ts).
// The ways out of issue 12 items 3–4 tried as an operator would, through the installed CLI
// (each command its own OS process) against real Docker, Kafka and both state backends:
//
// - a replacement killed inside the local finalization (receipt and ownership written, clear
//   not) is completed by `state resume` (serial + 1 once, one receipt, no runtime writes);
// - a retention loss while the operation is stopped is accepted (`state accept-retention-loss`,
//   killed between its decision and its offset move, then run again) and `state resume` finishes;
// - an operation whose state volume was removed is abandoned: nothing mutated, offsets never
//   reset by a later plan or apply;
// - a candidate that cannot reach the broker at start-up (exit 15, KAFKA_UNREACHABLE) is named
//   by `plan` as the operation's own, and started again by `state resume` once the broker is
//   reachable under the name its plan uses.
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { dockerCli, removeLabelled } from "../harness/docker.ts";
import { committedOffsets, offsetRange, produce, withAdmin } from "../harness/kafka.ts";
import { runnerImageId, starterProject, type TestProject } from "../harness/project.ts";
import { apply, plan } from "../lib/runtime/session.ts";
import { writePlanFile } from "../lib/plan/plan_file.ts";
import { LABEL } from "../lib/runtime/labels.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const launcher = new URL("../bin/sluice", import.meta.url).pathname;
const FAULT = { SLUICE_TEST_ONLY_ALLOW_FAULTS: "1" };
const PARTS = [0, 1, 2];

interface Run {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], env: Record<string, string>): Promise<Run> {
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

// deno-lint-ignore no-explicit-any -- the CLI's JSON envelope, asserted field by field
function json(r: Run): any {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`not JSON (exit ${r.code} ${r.signal}): ${r.stdout}\n${r.stderr}`);
  }
}

const order = (id: string, amount: number, partition?: number) => ({
  key: id,
  value: JSON.stringify({ order_id: id, amount, paid: true, customer: null }),
  partition,
});

interface Case {
  p: TestProject;
  env: Record<string, string>;
  appId: string;
  bootstrap: string;
  show(): Promise<{ operationId: string | null; staleLock: string | null; serial: number }>;
  reviewed(predicate: string): Promise<string>;
  offsets(): Promise<Record<string, string>>;
  lockArgs(stale: string | null): string[];
}

async function setUp(backend: "local" | "postgres"): Promise<Case> {
  const shared = await sharedEnv();
  const dsnVar = "SLUICE_TEST_STATE_DSN";
  const env: Record<string, string> = {};
  if (backend === "postgres") {
    Deno.env.set(dsnVar, shared.pgUrl);
    env[dsnVar] = shared.pgUrl;
  }
  const p = await starterProject(shared, {
    image: await runnerImageId(),
    stateDsnEnv: backend === "postgres" ? dsnVar : undefined,
  });
  const created = await plan({ dir: p.dir });
  const c = await apply({
    dir: p.dir,
    plan: created.plan,
    planSha256: created.sha256,
    extraLabels: shared.labels,
  });
  const appId = c.runners[0].application_id;
  return {
    p,
    env,
    appId,
    bootstrap: shared.bootstrapHost,
    async show() {
      const d = json(await cli(["-o", "json", "state", "show", "--project", p.dir], env)).data;
      return {
        operationId: d.pending_operation?.operation_id ?? null,
        staleLock: d.lock.stale ? d.lock.holder.lock_id : null,
        serial: d.ownership.serial,
      };
    },
    async reviewed(predicate) {
      await p.setPredicate(predicate);
      const r = await plan({ dir: p.dir });
      assert.equal(r.plan.format, 6, JSON.stringify(r.plan.blockers));
      const path = `${p.dir}/replace-${crypto.randomUUID().slice(0, 8)}.plan.json`;
      await writePlanFile(path, r.plan);
      return path;
    },
    async offsets() {
      const m = await committedOffsets(shared.bootstrapHost, appId, p.inputTopic);
      return Object.fromEntries([...m].map(([k, v]) => [String(k), String(v)]));
    },
    lockArgs: (stale) => (stale ? ["--break-stale-lock", stale] : []),
  };
}

/** Kill `apply --plan` at a site; returns the pending operation and the dead holder's lock. */
async function killedApply(c: Case, planPath: string, point: string) {
  const w = await cli(["apply", "--project", c.p.dir, "--plan", planPath], {
    ...c.env,
    ...FAULT,
    SLUICE_FAULT_POINT: point,
  });
  assert.equal(w.signal, "SIGKILL", `${point}: exit ${w.code}\n${w.stderr}`);
  const s = await c.show();
  assert.ok(s.operationId, `${point} left no pending operation`);
  return { operationId: s.operationId!, staleLock: s.staleLock };
}

async function containersOf(appId: string): Promise<string[]> {
  const out = await new Deno.Command(dockerCli(), {
    args: ["ps", "-a", "-q", "--no-trunc", "--filter", `label=${LABEL.applicationId}=${appId}`],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim().split("\n").filter((x) => x !== "").sort();
}

Deno.test(
  "local: a replacement killed between the finalize's ownership write and its clear is completed by state resume",
  opts,
  async () => {
    const c = await setUp("local");
    try {
      await produce(c.bootstrap, c.p.inputTopic, [order("a1", 150), order("a2", 250)]);
      const planPath = await c.reviewed("amount >= 200 AND paid = TRUE");
      const { operationId, staleLock } = await killedApply(
        c,
        planPath,
        "state.local.finalize.ownership.rename:after",
      );
      const containers = await containersOf(c.appId);
      const offsets = await c.offsets();
      // before the fix: state resume stopped with PLAN_STALE_STATE and every apply was pending
      const common = ["--project", c.p.dir, "--plan", planPath, "--operation-id", operationId];
      const r = await cli(
        ["-o", "json", "state", "resume", ...common, ...c.lockArgs(staleLock)],
        c.env,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(json(r).data.committed, true);
      assert.equal(json(r).data.serial, 2);
      const after = await c.show();
      assert.equal(after.operationId, null);
      assert.equal(after.serial, 2);
      // no runtime writes: the same containers, offsets unchanged by sluice
      assert.deepEqual(await containersOf(c.appId), containers);
      for (const [k, v] of Object.entries(await c.offsets())) {
        assert.ok(BigInt(v) >= BigInt(offsets[k]));
      }
      const noop = await cli(["-o", "json", "plan", "--project", c.p.dir], c.env);
      assert.equal(noop.code, 0, noop.stdout);
      assert.equal(json(noop).data.noop, true);
    } finally {
      await removeLabelled(LABEL.applicationId, c.appId);
    }
  },
);

for (const backend of ["local", "postgres"] as const) {
  Deno.test(
    `${backend}: a retention loss is accepted and resumed; a volume-less operation is abandoned without touching offsets`,
    opts,
    async () => {
      const c = await setUp(backend);
      try {
        await produce(c.bootstrap, c.p.inputTopic, PARTS.map((p) => order(`a${p}`, 150, p)));
        // 1. retention overtakes the stopped operation
        const planPath = await c.reviewed("amount >= 200 AND paid = TRUE");
        const k = await killedApply(c, planPath, "docker.create_candidate:before");
        const common = ["--project", c.p.dir, "--plan", planPath, "--operation-id", k.operationId];
        const clean = await c.offsets();
        await produce(c.bootstrap, c.p.inputTopic, PARTS.map((p) => order(`x${p}`, 900, p)));
        const ranges = await offsetRange(c.bootstrap, c.p.inputTopic, PARTS);
        await withAdmin(c.bootstrap, (admin) =>
          admin.deleteRecords({
            topics: [{
              name: c.p.inputTopic,
              partitions: ranges.map((r) => ({ partition: r.partition, offset: r.latest })),
            }],
          }));
        const blocked = await cli(
          ["-o", "json", "state", "resume", ...common, ...c.lockArgs(k.staleLock)],
          c.env,
        );
        assert.equal(blocked.code, 4, blocked.stdout);
        assert.equal(json(blocked).errors[0].code, "BLOCKED_RETENTION_LOSS");
        const accept = [
          "-o",
          "json",
          "state",
          "accept-retention-loss",
          ...common,
          "--reason",
          "the expired orders are replayed from the archive",
        ];
        const killed = await cli(accept, {
          ...c.env,
          ...FAULT,
          SLUICE_FAULT_POINT: "kafka.move_offsets_to_retained:before",
        });
        assert.equal(killed.signal, "SIGKILL", killed.stderr);
        assert.deepEqual(await c.offsets(), clean, "the kill came before the move");
        const again = await cli([...accept, ...c.lockArgs((await c.show()).staleLock)], c.env);
        assert.equal(again.code, 0, again.stdout + again.stderr);
        assert.equal(json(again).data.recorded_now, false);
        const moved = await c.offsets();
        for (const r of ranges) assert.equal(moved[String(r.partition)], String(r.latest));
        const resumed = await cli(["-o", "json", "state", "resume", ...common], c.env);
        assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
        assert.equal(json(resumed).data.serial, 2);

        // 2. the next replacement loses its state volume: abandoned, nothing touched
        const plan2 = await c.reviewed("amount >= 300 AND paid = TRUE");
        const k2 = await killedApply(c, plan2, "docker.create_candidate:before");
        const rm = await new Deno.Command(dockerCli(), {
          args: ["volume", "rm", `${c.appId}-state`],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.equal(rm.code, 0, new TextDecoder().decode(rm.stderr));
        const offsets = await c.offsets();
        const containers = await containersOf(c.appId);
        const planned = await cli(["-o", "json", "plan", "--project", c.p.dir], c.env);
        assert.equal(planned.code, 4);
        assert.equal(json(planned).errors[0].code, "BLOCKED_OPERATION_PENDING");
        const abandoned = await cli([
          "-o",
          "json",
          "state",
          "abandon",
          "--project",
          c.p.dir,
          "--operation-id",
          k2.operationId,
          "--reason",
          "the state volume was removed by hand",
          ...c.lockArgs(k2.staleLock),
        ], c.env);
        assert.equal(abandoned.code, 0, abandoned.stdout + abandoned.stderr);
        const s = await c.show();
        assert.equal(s.operationId, null);
        assert.equal(s.serial, 2);
        // later plans and applies are blocked; nothing re-creates or repositions the group
        const after = await cli(["-o", "json", "plan", "--project", c.p.dir], c.env);
        assert.equal(after.code, 4, after.stdout);
        const applied = await cli(["-o", "json", "apply", "--project", c.p.dir], c.env);
        assert.equal(applied.code, 4, applied.stdout);
        assert.deepEqual(await c.offsets(), offsets);
        assert.deepEqual(await containersOf(c.appId), containers);
      } finally {
        await removeLabelled(LABEL.applicationId, c.appId);
      }
    },
  );
}

Deno.test(
  "postgres: a candidate that cannot reach the broker at start-up is restarted by state resume once it can",
  opts,
  async () => {
    const c = await setUp("postgres");
    const shared = await sharedEnv();
    const alias = `kafka-${crypto.randomUUID().slice(0, 8)}`;
    const [targetHost, targetPort] = shared.bootstrapInternal.split(":");
    try {
      await produce(c.bootstrap, c.p.inputTopic, [order("a1", 150), order("a2", 250)]);
      // the desired runner reaches the broker through a name whose host does not answer yet
      await startNamed(alias, shared, c.appId, ["-e", "sleep 3600"]);
      await c.p.editManifest((t) =>
        t.replace(/bootstrap_internal: .*$/m, `bootstrap_internal: ${alias}:${targetPort}`)
      );
      const planPath = await c.reviewed("amount >= 200 AND paid = TRUE");
      const applied = await cli(
        ["-o", "json", "apply", "--project", c.p.dir, "--plan", planPath],
        c.env,
      );
      assert.equal(applied.code, 4, applied.stdout + applied.stderr);
      const err = json(applied).errors[0];
      assert.equal(err.code, "BLOCKED_CANDIDATE_STARTUP_FAILED", applied.stdout);
      const operationId = err.evidence.result.operation_id as string;
      const planned = await cli(["-o", "json", "plan", "--project", c.p.dir], c.env);
      assert.equal(planned.code, 4);
      const blockers = json(planned).errors[0].evidence.blockers as Array<
        { code: string; message: string }
      >;
      assert.deepEqual([...new Set(blockers.map((b) => b.code))], ["BLOCKED_OPERATION_PENDING"]);
      assert.ok(blockers.some((b) => /that operation's candidate/.test(b.message)));

      // the cause is fixed: the name now reaches the broker (a TCP forwarder on the network)
      const rm = await new Deno.Command(dockerCli(), { args: ["rm", "-f", alias], stdout: "null" })
        .output();
      assert.equal(rm.code, 0);
      await startNamed(alias, shared, c.appId, [
        "-MIO::Socket::INET",
        "-MIO::Select",
        "-e",
        FORWARDER,
        targetPort,
        targetHost,
        targetPort,
      ]);
      const common = ["--project", c.p.dir, "--plan", planPath, "--operation-id", operationId];
      const resumed = await cli(["-o", "json", "state", "resume", ...common], c.env);
      assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
      assert.equal(json(resumed).data.committed, true);
      const receipt = json(resumed).data.receipt;
      assert.equal(receipt.resume_history[0].recovery.startup_failure.exit_code, 15);
      // which of the two the runner gives depends on how its admin call ends (a timeout, or a
      // failure once the broker's address cannot be connected): both are documented start-up
      // failures that a reachable broker cures
      assert.ok(
        ["KAFKA_UNREACHABLE", "KAFKA_ADMIN_FAILED"].includes(
          receipt.resume_history[0].recovery.startup_failure.reason,
        ),
        JSON.stringify(receipt.resume_history[0].recovery.startup_failure),
      );
    } finally {
      await removeLabelled(LABEL.applicationId, c.appId);
      await removeLabelled(LABEL.applicationId, `${c.appId}-forwarder`);
    }
  },
);

/** Run `perl ARGS` in the base image as a container named `name` on the test network. */
async function startNamed(
  name: string,
  shared: { network: string; labels: Record<string, string> },
  appId: string,
  args: string[],
) {
  const out = await new Deno.Command(dockerCli(), {
    args: [
      "run",
      "-d",
      "--name",
      name,
      "--network",
      shared.network,
      ...Object.entries(shared.labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]),
      "--label",
      `${LABEL.applicationId}=${appId}-forwarder`,
      "--entrypoint",
      "perl",
      "sluice/base:jre17-bookworm",
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

/** A TCP forwarder: listen on ARGV[0], forward each connection to ARGV[1]:ARGV[2]. */
const FORWARDER = `
my ($lp, $th, $tp) = @ARGV;
my $l = IO::Socket::INET->new(LocalPort => $lp, Listen => 64, ReuseAddr => 1) or die "listen: $!";
$SIG{CHLD} = 'IGNORE';
while (my $c = $l->accept) {
  next if fork;
  my $s = IO::Socket::INET->new(PeerAddr => $th, PeerPort => $tp) or exit 1;
  my $sel = IO::Select->new($c, $s);
  while (my @r = $sel->can_read) {
    for my $h (@r) {
      my $o = $h == $c ? $s : $c;
      my $n = sysread($h, my $b, 65536);
      exit 0 unless $n;
      syswrite($o, $b);
    }
  }
  exit 0;
}`;
