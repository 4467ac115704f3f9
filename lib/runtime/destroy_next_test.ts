import assert from "node:assert/strict";
import type { DestroyConnectorAction, RemoveRunnerAction } from "../plan/removals.ts";
import { DESTROY_TABLE, destroySites } from "../protocol/destroy.ts";
import { blocker } from "../validation/blocker.ts";
import type { DestroyDataLeft } from "./destroy_data.ts";
import {
  type ConnectorLeft,
  decideDestroy,
  type DestroyReadings,
  reportedDestroy,
} from "./destroy_next.ts";
import type { RemovalReadings, RunnerReading } from "./removal_reading.ts";
import { removeAction, runnerContainer, runnerReading } from "../../testing/removal_readings.ts";

// decideDestroy is called through the states a destroy passes, on hand-built readings: only the
// fields its rows read are filled (the casts below say so)

/** A running runner with one group member. */
function running(a: RemoveRunnerAction): RunnerReading {
  return runnerReading(a, runnerContainer(a, "running"), 1);
}

function connector(name: string, state: "left" | "done" | "drifted"): ConnectorLeft {
  return {
    action: {
      type: "remove_connector",
      name,
      cluster: "main",
    } as unknown as DestroyConnectorAction,
    position: state === "drifted"
      ? { kind: "blocked", blocker: blocker("BLOCKED_CONNECTOR_DRIFT", `${name} drifted`) }
      : { kind: state === "left" ? "before" : "after" },
    left: state === "left",
  };
}

const NOTHING: DestroyDataLeft = { delete_group: [], remove_volume: [], delete_topic: [] };

function readings(over: {
  removal?: Partial<RemovalReadings>;
  connectors?: ConnectorLeft[];
  data?: DestroyDataLeft | null;
}): DestroyReadings {
  const runners = over.removal?.runners ?? [];
  return {
    removal: {
      operationId: "op-1",
      actions: runners.map((r) => r.action),
      committed: false,
      changedOwnership: null,
      runners,
      ...over.removal,
    },
    connectors: over.connectors ?? [],
    data: over.data ?? null,
  };
}

Deno.test("the destroy table is one list, and its sites are that list's, in its order", () => {
  assert.deepEqual(DESTROY_TABLE.map((r) => r.step), [
    "intent",
    "delete_connector",
    "term_runner",
    "await_closed",
    "remove_container",
    "delete_group",
    "remove_volume",
    "delete_topic",
    "commit",
  ]);
  assert.deepEqual(
    destroySites().map((s) => s.name),
    DESTROY_TABLE.flatMap((r) => r.site ? [r.site.name] : []),
  );
});

Deno.test("decideDestroy walks the whole table: connector, runner, data rows, then the commit", () => {
  const a = removeAction("orders");
  // a connector left comes before any runner
  const c = decideDestroy(readings({ connectors: [connector("sink", "left")] }));
  assert.equal(c.kind, "delete_connector");
  assert.equal(c.kind === "delete_connector" && c.action.name, "sink");
  assert.equal(reportedDestroy(c).row, "delete_connector");
  // connectors done: the runner rows, each runner through TERM first
  const t = decideDestroy(
    readings({ connectors: [connector("sink", "done")], removal: { runners: [running(a)] } }),
  );
  assert.equal(t.kind, "term_runner");
  // every runner absent: the data rows in table order, one resource at a time
  const data: DestroyDataLeft = {
    delete_group: [],
    remove_volume: [{
      step: "remove_volume",
      name: "vol-orders",
      volume: { name: "vol-orders", application_id: "app-orders", instance_id: "i1" },
    }],
    delete_topic: [{
      step: "delete_topic",
      name: "orders-out",
      topic: { name: "orders-out", topic_id: "t1" },
    }],
  };
  const v = decideDestroy(readings({ data }));
  assert.equal(v.kind, "remove_volume");
  assert.equal(reportedDestroy(v).detail, "delete state volume vol-orders");
  const topic = decideDestroy(readings({ data: { ...data, remove_volume: [] } }));
  assert.equal(topic.kind, "delete_topic");
  // nothing left: the commit
  const commit = decideDestroy(readings({ data: NOTHING }));
  assert.equal(commit.kind, "commit");
  assert.equal(commit.kind === "commit" && commit.recorded, false);
});

Deno.test("decideDestroy: a drifted connector blocks at the connector row with its code, nothing else decided", () => {
  const d = decideDestroy(readings({
    connectors: [connector("a", "done"), connector("b", "drifted")],
    removal: { runners: [running(removeAction("orders"))] },
  }));
  assert.equal(d.kind, "blocked");
  const r = reportedDestroy(d);
  assert.equal(r.row, "delete_connector");
  assert.deepEqual(r.blockers.map((b) => b.code), ["BLOCKED_CONNECTOR_DRIFT"]);
});

Deno.test("decideDestroy: the intent's check comes first — changed ownership blocks before any connector; a recorded commit only clears", () => {
  const changed = decideDestroy(readings({
    removal: { changedOwnership: { recorded: "a", now: "b" } },
    connectors: [connector("sink", "left")],
  }));
  assert.equal(changed.kind, "blocked");
  assert.equal(reportedDestroy(changed).row, "intent");
  const recorded = decideDestroy(readings({ removal: { committed: true } }));
  assert.equal(recorded.kind, "commit");
  assert.equal(recorded.kind === "commit" && recorded.recorded, true);
});
