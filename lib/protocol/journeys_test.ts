import assert from "node:assert/strict";
import {
  admitsDayTwo,
  dayTwoBinding,
  type Journey,
  JOURNEY_DESCRIPTORS,
  journeyOfAction,
  journeyOfKind,
  planMixes,
} from "./journeys.ts";
import { faultInventory } from "./inventory.ts";
import { CONNECTOR_ACTION_TYPES } from "../plan/connectors.ts";

/** Every action type the planner writes (lib/plan/plan.ts `PlannedAction`). */
const PLANNED_TYPES = [
  "create_topic",
  "create_runner",
  "replace_runner_predicate",
  "remove_runner",
  "destroy",
  ...CONNECTOR_ACTION_TYPES,
];

Deno.test("every planned action type belongs to exactly one journey, and every journey's operation kind is its own", () => {
  for (const t of PLANNED_TYPES) {
    const owners = JOURNEY_DESCRIPTORS.filter((j) => j.actions.includes(t));
    assert.equal(owners.length, 1, t);
    assert.equal(journeyOfAction(t), owners[0]);
  }
  assert.deepEqual(
    JOURNEY_DESCRIPTORS.flatMap((j) => j.actions).sort(),
    [...PLANNED_TYPES].sort(),
    "no journey claims a type the planner never writes",
  );
  const kinds = JOURNEY_DESCRIPTORS.flatMap((j) => (j.kind ? [j.kind] : []));
  assert.equal(new Set(kinds).size, kinds.length);
  assert.equal(journeyOfKind("runner_removal")?.name, "removal");
  assert.equal(journeyOfKind("nothing"), undefined);
  assert.equal(journeyOfAction("no_such_action"), undefined);
});

Deno.test("the inventory names exactly the registry's crossings, and every crossing crosses a site", () => {
  const by = JOURNEY_DESCRIPTORS.flatMap((j) => j.crossings.map((c) => c.by));
  assert.equal(new Set(by).size, by.length, "crossing names are unique");
  const used = new Set(faultInventory().flatMap((e) => e.journeys));
  assert.deepEqual([...used].sort(), [...by].sort());
  for (const j of JOURNEY_DESCRIPTORS) {
    for (const c of j.crossings) {
      for (const s of c.sites()) {
        const e = faultInventory().find((x) => x.site.name === s.name)!;
        assert.ok(e.journeys.includes(c.by as Journey), `${c.by} ${s.name}`);
      }
    }
  }
});

Deno.test("mixing: creates and connector changes mix; a replacement and a removal each go alone", () => {
  const topic = { type: "create_topic" };
  const runner = { type: "create_runner", model: "b" };
  const replace = { type: "replace_runner_predicate", model: "a" };
  const remove = { type: "remove_runner", model: "r" };
  const connector = { type: "create_connector", name: "c1" };
  assert.deepEqual(planMixes([topic, runner, connector]), []);
  assert.deepEqual(planMixes([replace]), []);
  assert.deepEqual(planMixes([remove, { ...remove, model: "s" }]), []);
  assert.deepEqual(planMixes([topic, replace, runner]).map((m) => m.message), [
    "a predicate replacement must be the only mutation of an apply; this plan has 3 actions (create_topic, replace_runner_predicate, create_runner)",
  ]);
  assert.deepEqual(planMixes([replace, { ...replace, model: "b" }]).map((m) => m.code), [
    "BLOCKED_MIXED_REPLACEMENT",
  ]);
  const withConnector = planMixes([replace, connector]);
  assert.deepEqual(withConnector.map((m) => m.code), ["BLOCKED_CONNECTOR_WITH_REPLACEMENT"]);
  assert.deepEqual(withConnector[0].evidence, { connectors: ["c1"] });
  assert.match(withConnector[0].message, /connector changes \(create_connector c1\)/);
  const removal = planMixes([remove, topic, connector]);
  assert.deepEqual(removal.map((m) => m.code), ["BLOCKED_REMOVAL_MIXED"]);
  assert.deepEqual(removal[0].evidence, { removals: ["r"] });
  assert.match(
    removal[0].message,
    /^a runner removal \(r\) is applied on its own, .* 2 other changes:/,
  );
  assert.match(planMixes([remove, topic])[0].message, / 1 other change:/);
  // a removal beside a replacement breaks both journeys' rules
  assert.deepEqual(planMixes([remove, replace]).map((m) => m.code), [
    "BLOCKED_MIXED_REPLACEMENT",
    "BLOCKED_REMOVAL_MIXED",
  ]);
  // an action of a journey added later is refused beside a replacement and a removal alike
  const toy = { type: "annotate_runner", model: "t" };
  assert.deepEqual(planMixes([replace, toy]).map((m) => m.code), ["BLOCKED_MIXED_REPLACEMENT"]);
  assert.deepEqual(planMixes([remove, toy]).map((m) => m.code), ["BLOCKED_REMOVAL_MIXED"]);
});

Deno.test("a pending operation admits a day-two event only where its journey says so", () => {
  const removal = (applicationId: string) => ({
    kind: "runner_removal",
    intent: {
      details: {
        actions: [{ model: "m", application_id: applicationId, container_id: "c".repeat(64) }],
      },
    },
  });
  assert.equal(admitsDayTwo(removal("app"), "app"), true);
  assert.equal(admitsDayTwo(removal("other"), "app"), false);
  assert.equal(admitsDayTwo({ ...removal("app"), kind: "create" }, "app"), false);
  assert.equal(admitsDayTwo({ ...removal("app"), kind: "runner_update" }, "app"), false);
});

Deno.test("the registry gives a pending removal's or destroy's binding of a runner, and no other journey's", () => {
  const bound = { model: "m", application_id: "app", container_id: "c".repeat(64) };
  const pending = (kind: string) => ({ kind, intent: { details: { actions: [bound] } } });
  assert.deepEqual(dayTwoBinding(pending("runner_removal"), "app"), bound);
  assert.deepEqual(dayTwoBinding(pending("destroy"), "app"), bound);
  assert.equal(dayTwoBinding(pending("destroy"), "other"), null);
  assert.equal(dayTwoBinding(pending("create"), "app"), null);
  assert.equal(dayTwoBinding(pending("connector_change"), "app"), null);
  assert.equal(admitsDayTwo(pending("destroy"), "app"), true);
});
