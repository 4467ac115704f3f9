// test-needs: env
// Needs: Docker, the broker, the runner image, PostgreSQL (shared environment from tools/test.ts).
// A way out only the real runner can show, tried as an operator would through the installed CLI
// (each command its own OS process) against real Docker and Kafka: a candidate that cannot reach
// the broker at start-up (the real runner's exit 15, KAFKA_UNREACHABLE) is named by `plan` as the
// operation's own, and started again by `state resume` once the broker is reachable under the
// name its plan uses. The other ways out of issue 12 (a local finalization killed between its
// files, a retention loss accepted, a volume-less operation abandoned) are proven over the fakes
// (lib/runtime/ways_out_test.ts, the crash sweep's state points) and, for what real Kafka shows
// of an acceptance, by the fault matrix's operator case (probes/catalogue.ts, SUITE_MATRIX).
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { dockerCli, removeLabelled } from "../harness/docker.ts";
import { committedOffsets, produce } from "../harness/kafka.ts";
import { runnerImageId, starterProject, type TestProject } from "../harness/project.ts";
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
