/**
 * The pipeline demo (`./run demo --pipeline`): the orders job with Kafka Connect on both ends.
 *
 *  1. bring up a real environment: a Docker network, a KRaft broker and a Kafka Connect worker;
 *  2. write the pipeline project: the orders starter plus a FileStream source connector that
 *     reads a file of JSON orders into `raw_orders` and a FileStream sink connector that writes
 *     `eligible_orders` to a file (its configuration holds a secret, by reference);
 *  3. `sluice plan --out` then `sluice apply --plan`: topics, the runner, then both connectors;
 *     the sink file holds exactly the orders the filter keeps;
 *  4. change the filter (amount >= 100 → amount >= 200): the reviewed format-6 replacement
 *     leaves both connectors untouched (same configuration, same task states) and the sink
 *     continues without a duplicate;
 *  5. remove the sink connector by an explicit `lifecycle.connector_removals` entry: the
 *     connector object is gone; `eligible_orders`, its records, the sink's consumer group offsets
 *     and the written file stay; the next plan says "already absent" and changes nothing.
 *
 * It exits non-zero if any step does not give exactly the expected result, and removes what it
 * created (the connectors, the runner container and volume, the worker, the broker, the network).
 * @module
 */
import { removeLabelled } from "../harness/docker.ts";
import { startEnv } from "../harness/env.ts";
import { committedOffsets, offsetRange, readAll } from "../harness/kafka.ts";
import { declareSinkRemoved, pipelineProject } from "../harness/pipeline.ts";
import { restConnect } from "../lib/providers/connect/rest.ts";
import type { ConnectPort } from "../lib/providers/connect/port.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SLUICE = `${ROOT}bin/sluice`;

function say(text: string): void {
  console.log(`\n[pipeline] ${text}`);
}

function fail(text: string): never {
  throw new Error(text);
}

/** Run a command, printing its output as it comes; fail unless it exits 0. */
async function run(cmd: string, args: string[]): Promise<void> {
  console.log(`$ ${[cmd.replace(ROOT, ""), ...args].join(" ")}`);
  const { code } = await new Deno.Command(cmd, { args, stdout: "inherit", stderr: "inherit" })
    .output();
  if (code !== 0) fail(`${cmd.replace(ROOT, "")} ${args[0]} exited with ${code}`);
}

/** Run a command and return its stdout; fail unless it exits 0. */
async function capture(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "inherit" }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) fail(`${cmd.replace(ROOT, "")} exited with ${out.code}:\n${stdout}`);
  return stdout;
}

type Order = { order_id: string; amount: number; paid: boolean; customer: string | null };

const line = (o: Order) => JSON.stringify({ order_id: o.order_id, amount: o.amount, paid: o.paid });

/** Poll the sink file until `done` (bounded by attempts); print and return its lines. */
async function sinkLines(path: string, done: (lines: string[]) => boolean): Promise<string[]> {
  let lines: string[] = [];
  for (let i = 0; i < 480; i++) {
    try {
      lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l.length > 0);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    if (done(lines)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  for (const l of lines) console.log(`  ${l}`);
  return lines;
}

function same(a: string[], b: string[], what: string): void {
  if (JSON.stringify(a) !== JSON.stringify(b)) {
    fail(`${what}: expected\n${b.join("\n")}\nfound\n${a.join("\n")}`);
  }
}

/** A connector as a reviewer compares it: configuration, state and tasks. */
async function snapshot(port: ConnectPort, name: string) {
  for (let i = 0; i < 480; i++) {
    const s = await port.connectorStatus(name);
    if (s?.connector.state === "RUNNING" && s.tasks.every((t) => t.state === "RUNNING")) {
      return JSON.stringify({
        config: await port.connectorConfig(name),
        state: s.connector.state,
        tasks: s.tasks.map((t) => ({ id: t.id, state: t.state, worker: t.workerId })),
      });
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  fail(`connector ${name} is not running`);
}

// the sink's configuration references a secret: its value reaches the worker and nothing else
Deno.env.set("PIPELINE_SINK_TOKEN", crypto.randomUUID());
Deno.env.set("SLUICE_SECRET_HASH_KEY", crypto.randomUUID() + crypto.randomUUID());

say("starting a Docker network, a Kafka broker (KRaft) and a Kafka Connect worker");
const env = await startEnv();
const connect = env.connect ?? fail("the environment has no Connect worker");
console.log(
  `broker ${env.bootstrapHost}; Connect REST ${connect.restHost} (${connect.restInternal} on ${env.network})`,
);
const port = restConnect(connect.restHost);
let ok = false;
let dir: string | null = null;
let names: string[] = [];
let applicationId = "";
try {
  say("runner image: runner/build.sh builds it unless it is up to date, and prints its ID");
  const image = (await capture("bash", [`${ROOT}runner/build.sh`])).trim().split("\n").at(-1)!;
  if (!/^sha256:[0-9a-f]{64}$/.test(image)) fail(`runner/build.sh printed ${image}`);

  const p = await pipelineProject({
    image,
    connect,
    bootstrapHost: env.bootstrapHost,
    bootstrapInternal: env.bootstrapInternal,
    network: env.network,
    sinkExtra: { "x.api.token": "${env:PIPELINE_SINK_TOKEN}" },
  });
  dir = p.dir;
  names = [p.sourceConnector, p.sinkConnector];
  applicationId = `sluice-${p.name}-eligible_orders`;
  const manifest = await Deno.readTextFile(`${p.dir}/sluice.yaml`);
  say("the project's connectors (sluice.yaml):");
  console.log(manifest.slice(manifest.indexOf("connect:\n")).trimEnd());

  const first: Order[] = [
    { order_id: "o-1001", amount: 250, paid: true, customer: "c-17" },
    { order_id: "o-1002", amount: 40, paid: true, customer: "c-03" },
    { order_id: "o-1003", amount: 120, paid: false, customer: null },
    { order_id: "o-1004", amount: 100, paid: true, customer: null },
    { order_id: "o-1005", amount: 99, paid: true, customer: "c-17" },
    { order_id: "o-1006", amount: 5000, paid: true, customer: "c-42" },
  ];
  say(`the orders file the source connector reads (${p.inputFileHost}):`);
  await Deno.writeTextFile(p.inputFileHost!, first.map((o) => JSON.stringify(o)).join("\n") + "\n");
  for (const o of first) console.log(`  ${JSON.stringify(o)}`);

  say("sluice plan --out create.plan.json: topics, the runner, then both connectors");
  await run(SLUICE, ["plan", "--project", p.dir, "--out", `${p.dir}/create.plan.json`]);
  say("sluice apply --plan create.plan.json");
  await run(SLUICE, ["apply", "--project", p.dir, "--plan", `${p.dir}/create.plan.json`]);

  const expectFirst = first.filter((o) => o.amount >= 100 && o.paid).map(line);
  say(`the sink's file (${p.outputFileHost}), exactly the orders WHERE amount >= 100 AND paid:`);
  same(
    await sinkLines(p.outputFileHost!, (l) => l.length >= expectFirst.length),
    expectFirst,
    "sink file",
  );
  await run(SLUICE, ["status", "--project", p.dir, "--health"]);

  say(
    "changing the filter to amount >= 200: a reviewed replacement; the connectors stay as they are",
  );
  const before = [await snapshot(port, p.sourceConnector), await snapshot(port, p.sinkConnector)];
  await p.setPredicate("amount >= 200 AND paid = TRUE");
  await run(SLUICE, ["plan", "--project", p.dir, "--out", `${p.dir}/replace.plan.json`]);
  await run(SLUICE, ["apply", "--project", p.dir, "--plan", `${p.dir}/replace.plan.json`]);
  const after = [await snapshot(port, p.sourceConnector), await snapshot(port, p.sinkConnector)];
  same(after, before, "the connectors after the replacement");
  console.log("both connectors: the same configuration, state and tasks as before the replacement");

  const second: Order[] = [
    { order_id: "o-2001", amount: 150, paid: true, customer: "c-41" },
    { order_id: "o-2002", amount: 200, paid: true, customer: "c-42" },
    { order_id: "o-2003", amount: 900, paid: false, customer: null },
    { order_id: "o-2004", amount: 640, paid: true, customer: "c-07" },
  ];
  say("appending orders to the file: from now on only amount >= 200 passes");
  await Deno.writeTextFile(
    p.inputFileHost!,
    second.map((o) => JSON.stringify(o)).join("\n") + "\n",
    {
      append: true,
    },
  );
  for (const o of second) console.log(`  ${JSON.stringify(o)}`);
  const expectAll = [...expectFirst, ...second.filter((o) => o.amount >= 200 && o.paid).map(line)];
  say(
    "the sink's file now: the first orders under the old filter, the new ones under the new, no duplicate",
  );
  same(
    await sinkLines(p.outputFileHost!, (l) => l.includes(expectAll.at(-1)!)),
    expectAll,
    "sink file after the replacement",
  );

  say("removing the sink connector: an explicit lifecycle.connector_removals entry");
  await p.editManifest(declareSinkRemoved(p));
  const edited = await Deno.readTextFile(`${p.dir}/sluice.yaml`);
  console.log(edited.slice(edited.indexOf("lifecycle:")).trimEnd());
  await run(SLUICE, ["plan", "--project", p.dir, "--out", `${p.dir}/remove.plan.json`]);
  await run(SLUICE, ["apply", "--project", p.dir, "--plan", `${p.dir}/remove.plan.json`]);
  if (await port.connectorConfig(p.sinkConnector) !== null) fail("the sink connector still exists");
  const [range] = await offsetRange(env.bootstrapHost, p.outputTopic);
  const group = await committedOffsets(
    env.bootstrapHost,
    `connect-${p.sinkConnector}`,
    p.outputTopic,
  );
  // (the runner writes transactions: the topic's offsets also count their commit markers)
  const records = await readAll(env.bootstrapHost, p.outputTopic, { expect: expectAll.length });
  const kept = records.map((r) => r.value ?? "");
  same(kept, expectAll, `the records of ${p.outputTopic} after the removal`);
  // past the last record it wrote (the runner's last transaction marker may follow it)
  const end = records.at(-1)!.offset! + 1n;
  if (!(group.get(0)! >= end && group.get(0)! <= range.latest)) {
    fail(`the sink's group offset is ${group.get(0)}; its records end at ${end}`);
  }
  same(
    (await Deno.readTextFile(p.outputFileHost!)).split("\n").filter((l) => l),
    expectAll,
    "the written file after the removal",
  );
  console.log(
    `${p.sinkConnector} is gone; ${p.outputTopic} keeps its ${kept.length} records, group connect-${p.sinkConnector} its offset ${
      group.get(0)
    }, and the file its ${expectAll.length} lines`,
  );

  say("sluice plan again: nothing to do; the sink is visibly already absent");
  const final = JSON.parse(await capture(SLUICE, ["-o", "json", "plan", "--project", p.dir]));
  await run(SLUICE, ["plan", "--project", p.dir]);
  if (final.data?.noop !== true) fail("the plan after the removal is not a no-op");
  ok = true;
} finally {
  say(
    "cleaning up: the connectors, the runner container and volume, the worker, the broker, the network",
  );
  // (the demo's own clean-up: sluice deletes a connector only by a declared removal)
  for (const name of names) await port.deleteConnector(name).catch(() => {});
  if (applicationId) await removeLabelled("sluice.application-id", applicationId);
  const report = await env.teardown();
  if (dir) await Deno.remove(dir, { recursive: true });
  if (report.strays.length > 0) {
    console.error(`stray containers were attached to the network: ${report.strays.join(", ")}`);
    ok = false;
  }
  console.log(ok ? "[pipeline] ok" : "[pipeline] FAILED");
}
if (!ok) Deno.exit(1);
