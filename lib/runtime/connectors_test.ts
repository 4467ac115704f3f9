// The connector journey on the fake world (testing/fakes): plan and apply of connectors through
// the public SDK — create, no-op, reviewed update with a redacted diff, explicit removal bound
// to the exact connector — the blockers (unowned, drift, missing, undeclared), the refusal of a
// plan that mixes a replacement with connector changes, and crash safety: a child process
// killed at each site of the connector table, continued by `apply --plan` again.
import assert from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { declareSinkRemoved, pipelineProject } from "../../harness/pipeline.ts";
import type { PipelineProject } from "../../harness/pipeline.ts";
import { endpointDigest } from "../providers/connect/rest.ts";
import { parsePlanBytes, sealPlan, writePlanFile } from "../plan/plan_file.ts";
import type { Plan } from "../plan/plan.ts";
import type { ConnectorAction } from "../plan/connectors.ts";
import { connectorOperationId, connectorSites } from "../protocol/connector.ts";
import { openStateStore } from "../state/open.ts";
import { ownedConnectors } from "../state/ownership.ts";
import { systemClock } from "../../testing/fakes/clock.ts";
import { createFakeWorld } from "../../testing/fakes/fake_world.ts";
import type { FakeWorld } from "../../testing/fakes/fake_world.ts";
import { runCli } from "../../cli/main.ts";
import { apply, plan } from "./session.ts";
import { localState } from "../../testing/ways/fake_project.ts";
import { planReview } from "../review/journey.ts";
import { renderReviewText } from "../review/render_text.ts";
import { renderReviewMarkdown } from "../review/render_markdown.ts";

const TOKEN = "s3cr3t-sink-token-value";
const KEY = "0123456789abcdef0123456789abcdef-test-key";
Deno.env.set("SINK_TOKEN", TOKEN);
Deno.env.set("SLUICE_SECRET_HASH_KEY", KEY);

interface Fixture {
  world: FakeWorld;
  p: PipelineProject;
  /** Write the manifest with its connectors (a fixture may start without them). */
  addConnectors(): Promise<void>;
  deps: Pick<Parameters<typeof plan>[0] & object, "docker" | "kafka" | "connect">;
  worldPath: string;
  close(): Promise<void>;
}

async function fixture(seed: string, options: { connectors?: boolean } = {}): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-connectors-" });
  const worldPath = `${dir}/world.json`;
  const world = createFakeWorld({ seed, path: worldPath, clock: systemClock() });
  const p = await pipelineProject({
    image: world.env.runnerImage,
    connect: {
      restHost: world.env.connect!.restHost,
      restInternal: world.env.connect!.restInternal,
      dataDirContainer: "/data",
      dataDirHost: null,
    },
    bootstrapHost: world.env.bootstrapHost,
    bootstrapInternal: world.env.bootstrapInternal,
    network: world.env.network,
    sinkExtra: { "x.api.token": "${env:SINK_TOKEN}" },
  });
  const full = await Deno.readTextFile(`${p.dir}/sluice.yaml`);
  if (options.connectors === false) await p.editManifest(withoutConnectors);
  const kafka = world.kafka(world.env.bootstrapHost);
  return {
    world,
    p,
    addConnectors: () =>
      p.editManifest((t) => t + full.slice(full.indexOf("\n# Kafka Connect:") + 1)),
    worldPath,
    deps: { docker: world.docker, kafka, connect: () => world.connect() },
    async close() {
      await kafka.close();
      await Deno.remove(p.dir, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The manifest without its connect/connectors sections (a project deployed before them). */
function withoutConnectors(text: string): string {
  return text.slice(0, text.indexOf("\n# Kafka Connect:")) + "\n";
}

async function stateText(f: Fixture): Promise<string> {
  let all = "";
  for await (const e of Deno.readDir(`${f.p.dir}/.sluice/state`)) {
    if (e.isFile) all += await Deno.readTextFile(`${f.p.dir}/.sluice/state/${e.name}`);
  }
  return all;
}

const types = (p: Plan) => p.actions.map((a) => a.type);
const connectorItems = (p: Plan) =>
  Object.fromEntries((p.connectors?.items ?? []).map((i) => [i.connector, i.change]));

async function planned(f: Fixture) {
  return await plan({ dir: f.p.dir, ...f.deps });
}

async function applied(f: Fixture) {
  const r = await planned(f);
  assert.deepEqual(r.plan.blockers, [], JSON.stringify(r.plan.blockers));
  return await apply({ dir: f.p.dir, plan: r.plan, planSha256: r.sha256, ...f.deps });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "no error";
  } catch (e) {
    if (e instanceof SluiceError) return e.code;
    throw e;
  }
}

Deno.test("connectors on the fake world: create, no-op, reviewed update with a redacted diff, explicit removal", async () => {
  const f = await fixture("connectors-lifecycle");
  try {
    const first = await planned(f);
    assert.deepEqual(first.plan.blockers, []);
    assert.deepEqual(types(first.plan), [
      "create_topic",
      "create_topic",
      "create_runner",
      "create_connector",
      "create_connector",
    ]);
    assert.deepEqual(connectorItems(first.plan), { orders_in: "create", orders_out: "create" });
    const create = first.plan.actions.find((a) => a.type === "create_connector") as ConnectorAction;
    assert.deepEqual(create.identity, {
      kafka_cluster_id: f.world.env.clusterId,
      endpoint_digest: endpointDigest(f.world.env.connect!.restHost),
    });
    // the plan binds references, keyed digests and fingerprints: never the secret, never the endpoint
    const planText = new TextDecoder().decode(first.bytes);
    assert.equal(planText.includes(TOKEN), false);
    assert.equal(planText.includes("fake-connect"), false);
    assert.ok(planText.includes("${env:SINK_TOKEN}"));

    const r1 = await apply({ dir: f.p.dir, plan: first.plan, planSha256: first.sha256, ...f.deps });
    assert.equal(r1.connectors?.connectors.length, 2);
    assert.ok(r1.connectors?.connectors.every((c) => c.running === true));
    const held = f.world.connectControl.connectors();
    assert.deepEqual(Object.keys(held).sort(), [f.p.sourceConnector, f.p.sinkConnector].sort());
    // what the worker holds is the resolved configuration: the secret reached it, nothing else did
    assert.equal(held[f.p.sinkConnector].config["x.api.token"], TOKEN);
    assert.equal(held[f.p.sinkConnector].config.name, f.p.sinkConnector);
    assert.equal(held[f.p.sinkConnector].config.topics, f.p.outputTopic);
    let snap = await localState(f);
    assert.equal(snap.ownership?.document.version, 2);
    assert.equal(snap.ownership?.document.serial, 2, "runtime create, then connectors");
    const owned = ownedConnectors(snap.ownership!.document);
    assert.deepEqual(owned.map((o) => o.name), [f.p.sinkConnector, f.p.sourceConnector].sort());
    assert.deepEqual(owned.find((o) => o.connector === "orders_out")?.secret_keys, ["x.api.token"]);
    assert.equal((await stateText(f)).includes(TOKEN), false);

    // no-op: the same plan again changes nothing
    const again = await planned(f);
    assert.deepEqual(again.plan.actions, []);
    assert.deepEqual(again.plan.blockers, []);
    assert.deepEqual(connectorItems(again.plan), { orders_in: "none", orders_out: "none" });

    // a reviewed update: the diff names the key, old and new value
    await f.p.editManifest((t) => t.replace(`${f.p.name}-eligible.jsonl`, `${f.p.name}-v2.jsonl`));
    const upd = await planned(f);
    assert.deepEqual(types(upd.plan), ["update_connector"]);
    const item = upd.plan.connectors!.items.find((i) => i.connector === "orders_out")!;
    assert.deepEqual(item.changes, [{
      key: "file",
      before: `/data/${f.p.name}-eligible.jsonl`,
      after: `/data/${f.p.name}-v2.jsonl`,
    }]);
    // the review shows the same diff, as text and as Markdown
    const review = (await planReview({ dir: f.p.dir, ...f.deps })).review;
    const text = renderReviewText(review);
    assert.match(
      text,
      new RegExp(`~ update connector ${f.p.sinkConnector} \\(sink, cluster main\\)`),
    );
    assert.ok(
      text.includes(`file: "/data/${f.p.name}-eligible.jsonl" → "/data/${f.p.name}-v2.jsonl"`),
      text,
    );
    assert.match(text, new RegExp(`unchanged connectors: ${f.p.sourceConnector} \\(RUNNING`));
    assert.match(renderReviewMarkdown(review), /\| `sluice-.*-orders_out` \| `main` \| update \|/);
    const r2 = await apply({ dir: f.p.dir, plan: upd.plan, planSha256: upd.sha256, ...f.deps });
    assert.equal(r2.serial, 3);
    assert.equal(
      f.world.connectControl.connectors()[f.p.sinkConnector].config.file,
      `/data/${f.p.name}-v2.jsonl`,
    );

    // a changed secret is a visible update that reveals neither value
    Deno.env.set("SINK_TOKEN", `${TOKEN}-rotated`);
    try {
      const rot = await planned(f);
      assert.deepEqual(types(rot.plan), ["update_connector"]);
      const ch = rot.plan.connectors!.items.find((i) => i.connector === "orders_out")!.changes;
      assert.deepEqual(ch, [{
        key: "x.api.token",
        before: "<redacted>",
        after: "${env:SINK_TOKEN}",
      }]);
      assert.equal(new TextDecoder().decode(rot.bytes).includes(TOKEN), false);
      const shown = renderReviewText((await planReview({ dir: f.p.dir, ...f.deps })).review);
      assert.ok(shown.includes('x.api.token: "<redacted>" → "${env:SINK_TOKEN}"'), shown);
      assert.equal(shown.includes(TOKEN), false);
      await apply({ dir: f.p.dir, plan: rot.plan, planSha256: rot.sha256, ...f.deps });
      assert.equal(
        f.world.connectControl.connectors()[f.p.sinkConnector].config["x.api.token"],
        `${TOKEN}-rotated`,
      );
      assert.equal((await stateText(f)).includes(TOKEN), false);
    } finally {
      Deno.env.set("SINK_TOKEN", TOKEN);
    }
    // (the secret is back to its first value: another reviewed update)
    await applied(f);

    // explicit removal: bound to the exact name, the cluster identity and the owned fingerprint
    await f.p.editManifest(declareSinkRemoved(f.p));
    const rm = await planned(f);
    assert.deepEqual(types(rm.plan), ["remove_connector"]);
    const rmText = renderReviewText((await planReview({ dir: f.p.dir, ...f.deps })).review);
    assert.match(rmText, /- remove connector .*: the connector object only/);
    assert.match(rmText, /note: Removing a connector deletes the connector object only/);
    snap = await localState(f);
    const ownedSink = ownedConnectors(snap.ownership!.document).find((o) =>
      o.name === f.p.sinkConnector
    )!;
    assert.deepEqual(rm.plan.actions[0], {
      type: "remove_connector",
      connector: "orders_out",
      name: f.p.sinkConnector,
      cluster: "main",
      identity: ownedSink.cluster_identity,
      config_fingerprint: ownedSink.config_fingerprint,
    });
    const before = f.world.control.snapshot();
    await apply({ dir: f.p.dir, plan: rm.plan, planSha256: rm.sha256, ...f.deps });
    const held2 = f.world.connectControl.connectors();
    assert.deepEqual(Object.keys(held2), [f.p.sourceConnector]);
    // the connector object only: its topic and records stay
    assert.deepEqual(
      f.world.control.snapshot().kafka.topics[f.p.outputTopic],
      before.kafka.topics[f.p.outputTopic],
    );
    snap = await localState(f);
    assert.deepEqual(ownedConnectors(snap.ownership!.document).map((o) => o.connector), [
      "orders_in",
    ]);

    // declared removed and absent: a visible "already absent", no action
    const absent = await planned(f);
    assert.deepEqual(absent.plan.actions, []);
    assert.deepEqual(absent.plan.blockers, []);
    assert.equal(connectorItems(absent.plan).orders_out, "already_absent");
  } finally {
    await f.close();
  }
});

Deno.test("a connector of the same name created by hand is never modified or deleted", async () => {
  const f = await fixture("connectors-by-hand");
  try {
    const byHand = {
      "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
      topics: "somebody-elses-topic",
      file: "/data/theirs.jsonl",
    };
    f.world.connectControl.createByHand(f.p.sinkConnector, byHand);
    const p1 = await planned(f);
    assert.deepEqual(p1.plan.blockers.map((b) => b.code), ["BLOCKED_UNOWNED_CONNECTOR"]);
    // the blocker names its ways out
    assert.match(p1.plan.blockers[0].message, /ways out: rename the logical connector/);
    assert.equal(connectorItems(p1.plan).orders_out, "blocked");
    assert.equal(types(p1.plan).includes("update_connector"), false);
    // the blocked plan cannot be applied; the source alone is not enough to bypass it
    assert.equal(
      await codeOf(apply({ dir: f.p.dir, plan: p1.plan, planSha256: p1.sha256, ...f.deps })),
      "BLOCKED_UNOWNED_CONNECTOR",
    );
    // declaring its removal does not make it ours either
    await f.p.editManifest(declareSinkRemoved(f.p));
    const p2 = await planned(f);
    assert.deepEqual(p2.plan.blockers.map((b) => b.code), ["BLOCKED_UNOWNED_CONNECTOR"]);
    assert.equal(types(p2.plan).includes("remove_connector"), false);
    const held = f.world.connectControl.connectors()[f.p.sinkConnector];
    assert.deepEqual(held.config, { ...byHand, name: f.p.sinkConnector });
    assert.equal(
      f.world.control.mutations().filter((m) => m.by === "connect").length,
      0,
      "sluice made no Connect mutation",
    );
  } finally {
    await f.close();
  }
});

Deno.test("a look-alike connector that appears between plan and apply is named as an ownership problem, nothing done", async () => {
  const f = await fixture("connectors-look-alike");
  try {
    const p1 = await planned(f);
    assert.deepEqual(p1.plan.blockers, []);
    // someone creates exactly what this plan would submit (the secret resolved), before the apply
    const artifact = p1.plan.connectors!.artifacts.find((a) =>
      a.artifact.name === f.p.sinkConnector
    )!.artifact;
    const resolved = JSON.parse(
      JSON.stringify(artifact.config).replaceAll("${env:SINK_TOKEN}", TOKEN),
    ) as Record<string, string>;
    f.world.connectControl.createByHand(f.p.sinkConnector, resolved);
    const mutations = f.world.control.mutations().length;
    let error: unknown;
    try {
      await apply({ dir: f.p.dir, plan: p1.plan, planSha256: p1.sha256, ...f.deps });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof SluiceError, String(error));
    assert.equal(error.code, "BLOCKED_UNOWNED_CONNECTOR");
    assert.match(error.message, /look-alike this project did not create, so it does not own it/);
    assert.match(error.message, /ways out: rename the logical connector/);
    assert.equal(f.world.control.mutations().length, mutations, "nothing was mutated");
  } finally {
    await f.close();
  }
});

Deno.test("drift blocks an owned connector's update and removal; a vanished one is missing, then released", async () => {
  const f = await fixture("connectors-drift");
  try {
    await applied(f);
    f.world.connectControl.editByHand(f.p.sinkConnector, { "tasks.max": "3" });
    const drift = await planned(f);
    assert.deepEqual(drift.plan.blockers.map((b) => b.code), ["BLOCKED_CONNECTOR_DRIFT"]);
    const item = drift.plan.connectors!.items.find((i) => i.connector === "orders_out")!;
    assert.deepEqual(item.changes, [{ key: "tasks.max", before: "3", after: "1" }]);
    await f.p.editManifest(declareSinkRemoved(f.p));
    const rm = await planned(f);
    assert.deepEqual(rm.plan.blockers.map((b) => b.code), ["BLOCKED_CONNECTOR_DRIFT"]);
    assert.deepEqual(rm.plan.actions, []);
    assert.ok(f.world.connectControl.connectors()[f.p.sinkConnector], "still there");
    // deleted by hand: the declared removal releases the record without a Connect call
    f.world.connectControl.deleteByHand(f.p.sinkConnector);
    const release = await planned(f);
    assert.deepEqual(types(release.plan), ["release_connector"]);
    const before = f.world.control.mutations().filter((m) => m.by === "connect").length;
    await apply({ dir: f.p.dir, plan: release.plan, planSha256: release.sha256, ...f.deps });
    assert.equal(f.world.control.mutations().filter((m) => m.by === "connect").length, before);
    assert.deepEqual(
      ownedConnectors((await localState(f)).ownership!.document).map((o) => o.connector),
      ["orders_in"],
    );
    // an owned connector deleted by hand while still declared is missing (never recreated silently)
    f.world.connectControl.deleteByHand(f.p.sourceConnector);
    const missing = await planned(f);
    assert.deepEqual(missing.plan.blockers.map((b) => b.code), ["BLOCKED_CONNECTOR_MISSING"]);
    // and one dropped from the project without a removal is never removed
    await f.p.editManifest((t) => t.replace(/connectors:\n {2}orders_in:\n( {4,}.*\n)+/, ""));
    const undeclared = await planned(f);
    assert.deepEqual(undeclared.plan.blockers.map((b) => b.code), ["BLOCKED_CONNECTOR_UNDECLARED"]);
  } finally {
    await f.close();
  }
});

Deno.test("a replacement and a connector change are never applied together: blocked at plan, refused in a file before any mutation", async () => {
  const f = await fixture("connectors-mixed", { connectors: false });
  try {
    await applied(f);
    // plan time: a new predicate and new connectors
    await f.p.setPredicate("amount >= 200 AND paid = TRUE");
    const restore = await Deno.readTextFile(`${f.p.dir}/sluice.yaml`);
    await f.addConnectors();
    const mixed = await planned(f);
    assert.equal(mixed.plan.format, 5);
    assert.ok(
      mixed.plan.blockers.some((b) => b.code === "BLOCKED_CONNECTOR_WITH_REPLACEMENT"),
      JSON.stringify(mixed.plan.blockers.map((b) => b.code)),
    );
    // file level: a re-sealed format-6 plan with a connector action, and a format-5 plan with both
    await f.p.editManifest(() => restore);
    const replace = await planned(f);
    assert.equal(replace.plan.format, 6);
    const connectorAction = mixed.plan.actions.find((a) => a.type === "create_connector")!;
    const six: Plan = {
      ...replace.plan,
      actions: [...replace.plan.actions, connectorAction],
      connectors: mixed.plan.connectors,
    };
    const five: Plan = { ...six, format: 5, typed_action: null };
    const codeOfBytes = (p: Plan) => {
      try {
        parsePlanBytes(sealPlan(p).bytes);
        return "accepted";
      } catch (e) {
        return (e as SluiceError).code;
      }
    };
    assert.equal(codeOfBytes(six), "PLAN_REPLACEMENT_WITH_CONNECTOR_CHANGE");
    assert.equal(codeOfBytes(five), "PLAN_CONNECTOR_WITH_REPLACEMENT");
    // through the CLI: exit 3, and the world and the state are exactly as they were
    const worldBefore = JSON.stringify(f.world.control.snapshot().docker.containers);
    const stateBefore = await stateText(f);
    const logBefore = f.world.control.mutations().length;
    for (const [name, p] of [["six", six], ["five", five]] as const) {
      const file = `${f.p.dir}/${name}.plan.json`;
      await Deno.writeFile(file, sealPlan(p).bytes);
      const code = await runCli(["-o", "json", "apply", "--project", f.p.dir, "--plan", file], {
        ...f.deps,
        connect: () => f.world.connect(),
      });
      assert.equal(code, 3, name);
    }
    assert.equal(f.world.control.mutations().length, logBefore);
    assert.equal(JSON.stringify(f.world.control.snapshot().docker.containers), worldBefore);
    assert.equal(await stateText(f), stateBefore);
    assert.deepEqual(f.world.connectControl.connectors(), {});
  } finally {
    await f.close();
  }
});

Deno.test("a refused create ends the operation with what was done; a lost response is continued by apply --plan again", async () => {
  const f = await fixture("connectors-refusals", { connectors: false });
  try {
    await applied(f);
    await f.addConnectors();
    // the worker cannot be reached for the second create: nothing happened to it
    f.world.control.failCall("createConnector", { match: f.p.sinkConnector, effect: "fail" });
    const p1 = await planned(f);
    assert.deepEqual(types(p1.plan), ["create_connector", "create_connector"]);
    const err = await codeOf(
      apply({ dir: f.p.dir, plan: p1.plan, planSha256: p1.sha256, ...f.deps }),
    );
    assert.equal(err, "ENV_CONNECT_UNREACHABLE");
    let snap = await localState(f);
    assert.equal(snap.control, null, "the refused operation is finished, not left pending");
    assert.deepEqual(ownedConnectors(snap.ownership!.document).map((o) => o.connector), [
      "orders_in",
    ]);
    // the next plan shows what is left
    const p2 = await planned(f);
    assert.deepEqual(types(p2.plan), ["create_connector"]);
    // a lost response: applied, the answer lost — the operation stays pending (exit 6) ...
    f.world.control.failCall("createConnector", { effect: "lose_response" });
    assert.equal(
      await codeOf(apply({ dir: f.p.dir, plan: p2.plan, planSha256: p2.sha256, ...f.deps })),
      "UNKNOWN_OUTCOME_CONNECT",
    );
    snap = await localState(f);
    assert.equal(snap.control?.opened.kind, "connector_change");
    // ... another plan cannot start while it is pending ...
    assert.equal(
      await codeOf(apply({ dir: f.p.dir, plan: p1.plan, planSha256: p1.sha256, ...f.deps })),
      "BLOCKED_OPERATION_PENDING",
    );
    // ... and the same plan continues it: the exact read proves the create happened
    const mutations = f.world.control.mutations().length;
    const done = await apply({ dir: f.p.dir, plan: p2.plan, planSha256: p2.sha256, ...f.deps });
    assert.equal(done.connectors?.continued, true);
    assert.equal(done.connectors?.connectors[0].observed_done, true);
    assert.equal(
      f.world.control.mutations().slice(mutations).filter((m) => m.by === "connect").length,
      0,
      "nothing was created twice",
    );
    snap = await localState(f);
    assert.equal(snap.control, null);
    assert.equal(ownedConnectors(snap.ownership!.document).length, 2);
    assert.deepEqual((await planned(f)).plan.actions, []);
  } finally {
    await f.close();
  }
});

/** Scenario of a crash case: what the plan does to the connectors. */
type Scenario = "create" | "update" | "remove";

async function crashCase(site: string, side: "before" | "after", scenario: Scenario) {
  const f = await fixture(`crash-${site}-${side}-${scenario}`, {
    connectors: scenario !== "create" ? undefined : false,
  });
  try {
    await applied(f);
    if (scenario === "create") await f.addConnectors();
    if (scenario === "update") {
      await f.p.editManifest((t) =>
        t.replace(`${f.p.name}-eligible.jsonl`, `${f.p.name}-v2.jsonl`)
      );
    }
    if (scenario === "remove") await f.p.editManifest(declareSinkRemoved(f.p));
    const r = await planned(f);
    assert.deepEqual(r.plan.blockers, []);
    const planPath = `${f.p.dir}/change.plan.json`;
    await writePlanFile(planPath, r.plan);
    const worker = new URL("../../testing/fakes/_apply_worker.ts", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", worker, f.worldPath, f.p.dir, planPath],
      env: {
        SLUICE_FAULT_POINT: `${site}:${side}`,
        SLUICE_TEST_ONLY_ALLOW_FAULTS: "1",
        SINK_TOKEN: TOKEN,
        SLUICE_SECRET_HASH_KEY: KEY,
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    const killed = out.signal === "SIGKILL";
    assert.ok(
      killed,
      `${site}:${side} (${scenario}) should kill the worker: ${stderr.slice(-800)}`,
    );
    assert.match(stderr, new RegExp(`SLUICE_FAULT_FIRED ${site.replaceAll(".", "\\.")}:${side}`));
    // the dead worker's lock is stale: broken explicitly, by its ID
    const store = openStateStore({
      backend: "local",
      dir: `${f.p.dir}/.sluice/state`,
      project: f.p.name,
      environment: null,
    });
    const lock = await store.inspectLock();
    await store.close();
    // (a kill after the lock's release leaves none)
    const released = site === "lock.local.release" && side === "after";
    assert.equal(lock.stale, !released, `stale lock: ${lock.diagnosis}`);
    // killed after the commit: the audit names this plan's operation and exact reads verify it
    const pre = await localState(f);
    const committedBefore = pre.control === null &&
      pre.history.events.some((e) =>
        e.kind === "ownership_committed" && e.operation_id === connectorOperationId(r.sha256)
      );
    assert.equal(
      committedBefore,
      (side === "after" &&
        ["state.commit_connectors", "state.local.commit_ownership.control.unlink"].includes(
          site,
        )) || site === "lock.local.release",
      "the control was cleared: the commit is complete",
    );
    // a fresh process's recovery: the same plan file again
    const again = await apply({
      dir: f.p.dir,
      plan: r.plan,
      planSha256: r.sha256,
      breakStaleLock: released ? undefined : lock.holder!.lock_id,
      ...f.deps,
    });
    assert.equal(again.noop, committedBefore);
    assert.equal(again.connectors?.verified_committed, committedBefore);
    const snap = await localState(f);
    assert.equal(snap.control, null, "no pending operation");
    const held = f.world.connectControl.connectors();
    const owned = ownedConnectors(snap.ownership!.document);
    if (scenario === "remove") {
      assert.deepEqual(Object.keys(held), [f.p.sourceConnector]);
      assert.deepEqual(owned.map((o) => o.name), [f.p.sourceConnector]);
    } else {
      assert.deepEqual(Object.keys(held).sort(), [f.p.sinkConnector, f.p.sourceConnector].sort());
      assert.deepEqual(owned.map((o) => o.name).sort(), Object.keys(held).sort());
    }
    if (scenario === "update") {
      assert.equal(held[f.p.sinkConnector].config.file, `/data/${f.p.name}-v2.jsonl`);
    }
    // each Connect mutation happened exactly once across both processes
    const mutations = f.world.control.mutations().filter((m) => m.by === "connect").map((m) =>
      `${m.op} ${m.key}`
    );
    const expected = {
      create: [
        `createConnector ${f.p.sourceConnector}`,
        `createConnector ${f.p.sinkConnector}`,
      ],
      update: [`updateConnectorConfig ${f.p.sinkConnector}`],
      remove: [`deleteConnector ${f.p.sinkConnector}`],
    }[scenario];
    const initial = scenario === "create" ? [] : [
      `createConnector ${f.p.sourceConnector}`,
      `createConnector ${f.p.sinkConnector}`,
    ].sort();
    assert.deepEqual(mutations.slice(0, initial.length).sort(), initial);
    assert.deepEqual(mutations.slice(initial.length), expected);
    // and the project is where the plan said: the next plan is a no-op
    const next = await planned(f);
    assert.deepEqual(next.plan.actions, []);
    assert.deepEqual(next.plan.blockers, []);
  } finally {
    await f.close();
  }
}

const SCENARIO_SITES: Record<Scenario, string[]> = {
  create: ["journal.connector_intent", "connect.create_connector", "state.commit_connectors"],
  update: [
    "connect.update_connector_config",
    "state.commit_connectors",
    // the local backend's writes of the operation: a half-written begin or commit
    "state.local.begin.control.rename",
    "state.local.commit_ownership.history.rename",
    "state.local.commit_ownership.ownership.rename",
    "state.local.commit_ownership.control.unlink",
    "lock.local.release",
  ],
  remove: ["journal.connector_intent", "connect.delete_connector", "state.commit_connectors"],
};

Deno.test("every site of the connector table is covered by a crash case", () => {
  const covered = new Set(Object.values(SCENARIO_SITES).flat());
  assert.deepEqual(connectorSites().map((s) => s.name).filter((n) => !covered.has(n)), []);
});

for (const [scenario, sites] of Object.entries(SCENARIO_SITES) as Array<[Scenario, string[]]>) {
  for (const site of sites) {
    for (const side of ["before", "after"] as const) {
      Deno.test(`killed at ${site}:${side} (${scenario}): apply --plan again finishes the same change`, () =>
        crashCase(site, side, scenario));
    }
  }
}
