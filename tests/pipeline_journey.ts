/**
 * The pipeline journey through the real `bin/sluice`, against real Docker, Kafka, Kafka Connect
 * and a state backend (the test files pick local or PostgreSQL): a FileStream source reads a file
 * of JSON orders into `raw_orders`, the runner filters into `eligible_orders`, a FileStream sink
 * writes them to a file — whose exact lines are checked; then a predicate replacement that
 * leaves the connectors untouched (same objects, same task states; the sink continues without
 * a duplicate); then the explicit removal of the sink connector (the object is gone; the topic,
 * its records, the sink's group offsets and the file stay). No output, plan file or state holds
 * the sink's secret, which the worker does hold.
 * @module
 */
import assert from "node:assert/strict";
import pg from "pg";
import type { EnvDescriptor } from "../harness/env.ts";
import { committedOffsets, offsetRange, readAll } from "../harness/kafka.ts";
import { runnerImageId } from "../harness/project.ts";
import { declareSinkRemoved, pipelineProject } from "../harness/pipeline.ts";
import type { PipelineProject } from "../harness/pipeline.ts";
import { restConnect } from "../lib/providers/connect/rest.ts";
import type { ConnectorStatus, ConnectPort } from "../lib/providers/connect/port.ts";
import {
  dropPgState,
  type Envelope,
  removeApplication,
  sluiceJson,
  starterApplicationId,
  STATE_DSN_ENV,
} from "./deploy_fixture.ts";

/** Values of the sink's secret and the digest key (test values, never shown by sluice). */
export const SINK_TOKEN = "pipeline-sink-token-7f3a9c";
const HASH_KEY = "pipeline-test-secret-hash-key-0123456789";

type Order = { order_id: string; amount: number; paid: boolean; customer: string | null };

/** Orders as the source file holds them: one JSON object per line. */
export function orderLines(prefix: string, amounts: number[]): Order[] {
  return amounts.map((amount, i) => ({
    order_id: `${prefix}-${i}`,
    amount,
    paid: i % 4 !== 3,
    customer: i % 2 === 0 ? `c-${i}` : null,
  }));
}

/** The exact line the runner writes (compact JSON, SELECT order) and the sink copies. */
export const outputLine = (o: Order) =>
  JSON.stringify({ order_id: o.order_id, amount: o.amount, paid: o.paid });

/** Poll a file until `done(lines)` (bounded by attempts); returns its lines. */
export async function waitLines(
  path: string,
  done: (lines: string[]) => boolean,
  attempts = 480,
): Promise<string[]> {
  let lines: string[] = [];
  for (let i = 0; i < attempts; i++) {
    try {
      lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l.length > 0);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    if (done(lines)) return lines;
    await new Promise((r) => setTimeout(r, 250));
  }
  return lines;
}

async function waitRunning(port: ConnectPort, name: string): Promise<ConnectorStatus> {
  let s: ConnectorStatus | null = null;
  for (let i = 0; i < 480; i++) {
    s = await port.connectorStatus(name);
    if (
      s?.connector.state === "RUNNING" && s.tasks.length > 0 &&
      s.tasks.every((t) => t.state === "RUNNING")
    ) return s;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`connector ${name} never ran: ${JSON.stringify(s)}`);
}

/** What a connector is, as a reviewer compares it: its configuration and its tasks' states. */
async function connectorObject(port: ConnectPort, name: string) {
  const s = await waitRunning(port, name);
  return {
    config: await port.connectorConfig(name),
    type: s.type,
    state: s.connector.state,
    tasks: s.tasks.map((t) => ({ id: t.id, state: t.state, workerId: t.workerId })),
  };
}

/** The options of one journey. */
export interface PipelineJourneyOptions {
  backend: "local" | "postgres";
}

/** Run the journey (see module docs) in the shared environment; cleans up what it made. */
export async function runPipelineJourney(env: EnvDescriptor, o: PipelineJourneyOptions) {
  const connect = env.connect;
  if (!connect) throw new Error("the shared environment has no Connect worker");
  const p = await pipelineProject({
    image: await runnerImageId(),
    connect,
    bootstrapHost: env.bootstrapHost,
    bootstrapInternal: env.bootstrapInternal,
    network: env.network,
    stateDsnEnv: o.backend === "postgres" ? STATE_DSN_ENV : undefined,
    sinkExtra: { "x.api.token": "${env:PIPELINE_SINK_TOKEN}" },
  });
  const vars: Record<string, string> = {
    PIPELINE_SINK_TOKEN: SINK_TOKEN,
    SLUICE_SECRET_HASH_KEY: HASH_KEY,
    ...(o.backend === "postgres" ? { [STATE_DSN_ENV]: env.pgUrl } : {}),
  };
  const port = restConnect(connect.restHost);
  const shown: string[] = [];
  const cli = async (args: string[], code: number): Promise<Envelope> => {
    const r = await sluiceJson([...args, "--project", p.dir], vars);
    shown.push(JSON.stringify(r.envelope), r.stderr);
    assert.equal(
      r.code,
      code,
      `sluice ${args.join(" ")}: exit ${r.code}\n${JSON.stringify(r.envelope.errors)}\n${r.stderr}`,
    );
    return r.envelope;
  };
  try {
    await journey(p, port, cli, env);
    // never shown, never stored: every CLI output, every plan file and the state
    const planFiles: string[] = [];
    for await (const e of Deno.readDir(p.dir)) {
      if (e.name.endsWith(".plan.json")) {
        planFiles.push(await Deno.readTextFile(`${p.dir}/${e.name}`));
      }
    }
    const stored = o.backend === "local"
      ? await localState(p.dir)
      : await pgState(env.pgUrl, p.name);
    assert.ok(stored.length > 0 && planFiles.length === 3);
    for (
      const [what, text] of [["output", shown.join("\n")], ["plans", planFiles.join("\n")], [
        "state",
        stored,
      ]]
    ) {
      assert.equal(text.includes(SINK_TOKEN), false, `the sink's secret is in the ${what}`);
      assert.equal(text.includes(HASH_KEY), false, `the digest key is in the ${what}`);
    }
  } finally {
    for (const name of [p.sourceConnector, p.sinkConnector]) {
      await port.deleteConnector(name).catch(() => {});
    }
    await removeApplication(starterApplicationId(p.name));
    if (o.backend === "postgres") await dropPgState(env.pgUrl, p.name);
    await Deno.remove(p.dir, { recursive: true });
  }
}

async function journey(
  p: PipelineProject,
  port: ConnectPort,
  cli: (args: string[], code: number) => Promise<Envelope>,
  env: EnvDescriptor,
) {
  const first = orderLines("a", [250, 40, 120, 100, 99, 5000, 180, 300]);
  await Deno.writeTextFile(p.inputFileHost!, first.map((x) => JSON.stringify(x)).join("\n") + "\n");

  // plan and apply: topics, the runner, then both connectors
  const planned = await cli(["plan", "--out", `${p.dir}/create.plan.json`], 0);
  const types = (e: Envelope) =>
    (e.data!.plan as { actions: Array<{ type: string }> }).actions.map((a) => a.type);
  assert.deepEqual(types(planned), [
    "create_topic",
    "create_topic",
    "create_runner",
    "create_connector",
    "create_connector",
  ]);
  const created = await cli(["apply", "--plan", `${p.dir}/create.plan.json`], 0);
  const outcomes =
    (created.data!.connectors as { connectors: Array<{ name: string; running: boolean }> })
      .connectors;
  assert.deepEqual(outcomes.map((c) => [c.name, c.running]), [
    [p.sourceConnector, true],
    [p.sinkConnector, true],
  ]);
  // the worker holds the resolved secret (sluice sent it, and nothing else holds it)
  assert.equal((await port.connectorConfig(p.sinkConnector))?.["x.api.token"], SINK_TOKEN);

  // the sink file: exactly the orders passing amount >= 100 AND paid, in order
  const passOld = (x: Order) => x.amount >= 100 && x.paid;
  const expectFirst = first.filter(passOld).map(outputLine);
  const lines1 = await waitLines(p.outputFileHost!, (l) => l.length >= expectFirst.length);
  assert.deepEqual(lines1, expectFirst);

  // a predicate replacement: connectors untouched
  const sourceBefore = await connectorObject(port, p.sourceConnector);
  const sinkBefore = await connectorObject(port, p.sinkConnector);
  await p.setPredicate("amount >= 200 AND paid = TRUE");
  const replace = await cli(["plan", "--out", `${p.dir}/replace.plan.json`], 0);
  const rplan = replace.data!.plan as {
    format: number;
    actions: Array<{ type: string }>;
    connectors: { items: Array<{ change: string }> };
  };
  assert.equal(rplan.format, 6);
  assert.deepEqual(rplan.actions.map((a) => a.type), ["replace_runner_predicate"]);
  assert.deepEqual(rplan.connectors.items.map((i) => i.change), ["none", "none"]);
  const replaced = await cli(["apply", "--plan", `${p.dir}/replace.plan.json`], 0);
  assert.equal(replaced.data!.committed, true);
  assert.deepEqual(await connectorObject(port, p.sourceConnector), sourceBefore);
  assert.deepEqual(await connectorObject(port, p.sinkConnector), sinkBefore);

  // more orders: the new filter, and no duplicate of anything written before
  const passNew = (x: Order) => x.amount >= 200 && x.paid;
  const second = [...orderLines("b", [150, 250, 199, 200, 500, 90, 201]), {
    order_id: "b-sentinel",
    amount: 999,
    paid: true,
    customer: null,
  }];
  await Deno.writeTextFile(
    p.inputFileHost!,
    second.map((x) => JSON.stringify(x)).join("\n") + "\n",
    { append: true },
  );
  const expectAll = [...expectFirst, ...second.filter(passNew).map(outputLine)];
  const sentinel = outputLine(second.at(-1)!);
  const lines2 = await waitLines(p.outputFileHost!, (l) => l.includes(sentinel));
  assert.deepEqual(lines2, expectAll, "the sink continued without a duplicate or a gap");

  // explicit removal of the sink connector
  await p.editManifest(declareSinkRemoved(p));
  const removal = await cli(["plan", "--out", `${p.dir}/remove.plan.json`], 0);
  const remove = (removal.data!.plan as { actions: Array<Record<string, unknown>> }).actions;
  assert.deepEqual(remove.map((a) => [a.type, a.name]), [["remove_connector", p.sinkConnector]]);
  assert.equal(
    (remove[0].identity as { kafka_cluster_id: string }).kafka_cluster_id,
    env.clusterId,
  );
  await cli(["apply", "--plan", `${p.dir}/remove.plan.json`], 0);
  assert.equal(await port.connectorConfig(p.sinkConnector), null, "the connector object is gone");
  assert.equal((await port.listConnectors()).includes(p.sinkConnector), false);
  // what stays: the topic with its records, the sink's group offsets, the written file
  // (the runner writes transactions: the topic's offsets also count their commit markers)
  const [range] = await offsetRange(env.bootstrapHost, p.outputTopic);
  const kept = await readAll(env.bootstrapHost, p.outputTopic, { expect: expectAll.length });
  assert.deepEqual(kept.map((r) => r.value), expectAll, "eligible_orders keeps its records");
  const group = await committedOffsets(
    env.bootstrapHost,
    `connect-${p.sinkConnector}`,
    p.outputTopic,
  );
  // past the last record it wrote (a last transaction marker may follow it)
  const last = kept.at(-1)!.offset! + 1n;
  assert.ok(
    group.get(0)! >= last && group.get(0)! <= range.latest,
    `the sink's consumer group keeps its offsets: ${
      group.get(0)
    } (records end at ${last}, topic at ${range.latest})`,
  );
  assert.deepEqual(
    (await Deno.readTextFile(p.outputFileHost!)).split("\n").filter((l) => l),
    expectAll,
    "the written file stays",
  );
  await waitRunning(port, p.sourceConnector);

  // the next plan: nothing to do; the removed sink is visibly "already absent"
  const after = await cli(["plan"], 0);
  assert.equal(after.data!.noop, true);
  const items = (after.data!.review as { connectors: Array<{ connector: string; change: string }> })
    .connectors;
  assert.deepEqual(items.map((i) => [i.connector, i.change]), [
    ["orders_in", "none"],
    ["orders_out", "already_absent"],
  ]);
}

async function localState(dir: string): Promise<string> {
  let all = "";
  for await (const e of Deno.readDir(`${dir}/.sluice/state`)) {
    if (e.isFile) all += await Deno.readTextFile(`${dir}/.sluice/state/${e.name}`);
  }
  return all;
}

async function pgState(url: string, project: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query("SELECT body FROM sluice.sluice_documents WHERE scope = $1", [
      JSON.stringify([project, null]),
    ]);
    return r.rows.map((x: { body: string }) => x.body).join("\n");
  } finally {
    await c.end();
  }
}

/**
 * A connector of the same name created by hand is never modified or deleted: the plan is
 * blocked (ownership required) whether the project declares the connector or its removal, and
 * the worker still holds exactly what was created by hand.
 */
export async function runHandMadeCase(env: EnvDescriptor) {
  const connect = env.connect!;
  const p = await pipelineProject({
    image: await runnerImageId(),
    connect,
    bootstrapHost: env.bootstrapHost,
    bootstrapInternal: env.bootstrapInternal,
    network: env.network,
  });
  const port = restConnect(connect.restHost);
  const byHand = {
    "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
    topics: p.outputTopic,
    file: `${connect.dataDirContainer}/${p.name}-by-hand.jsonl`,
    "tasks.max": "1",
  };
  try {
    await port.createConnector(p.sinkConnector, { config: byHand, secretKeys: [] });
    const blocked = await sluiceJson(["plan", "--project", p.dir, "--out", `${p.dir}/x.plan.json`]);
    assert.equal(blocked.code, 4, JSON.stringify(blocked.envelope.errors));
    assert.equal(blocked.envelope.errors[0].code, "BLOCKED_UNOWNED_CONNECTOR");
    // a blocked plan is not written; a fresh apply is refused by the same blocker
    await assert.rejects(Deno.stat(`${p.dir}/x.plan.json`), Deno.errors.NotFound);
    const refused = await sluiceJson(["apply", "--project", p.dir]);
    assert.equal(refused.code, 4);
    await p.editManifest(declareSinkRemoved(p));
    const removal = await sluiceJson(["plan", "--project", p.dir]);
    assert.equal(removal.code, 4);
    assert.equal(removal.envelope.errors[0].code, "BLOCKED_UNOWNED_CONNECTOR");
    assert.deepEqual(await port.connectorConfig(p.sinkConnector), {
      ...byHand,
      name: p.sinkConnector,
    });
    await waitRunning(port, p.sinkConnector);
    // nothing of the blocked plan was created either
    assert.equal(await port.connectorConfig(p.sourceConnector), null);
  } finally {
    await port.deleteConnector(p.sinkConnector).catch(() => {});
    await port.deleteConnector(p.sourceConnector).catch(() => {});
    await removeApplication(starterApplicationId(p.name));
    await Deno.remove(p.dir, { recursive: true });
  }
}
