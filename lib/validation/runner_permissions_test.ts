import assert from "node:assert/strict";
import type { AclBinding } from "../providers/kafka/port.ts";
import {
  checkRunnerPermissions,
  evaluateRunnerPermissions,
  runnerPermissionBlockers,
  runnerPermissionWarnings,
  type RunnerTopics,
} from "./runner_permissions.ts";

const APP = "sluice-shop-orders";
const RUNNER = "User:orders-runner";
const artifact: RunnerTopics = {
  application_id: APP,
  input: { topic: "raw_orders" },
  output: { topic: "orders" },
};
const withDeadLetter: RunnerTopics = {
  ...artifact,
  on_invalid: { policy: "dead_letter", topic: "orders_dlq" },
};

function acl(
  resourceType: AclBinding["resourceType"],
  resourceName: string,
  operation: string,
  more: Partial<AclBinding> = {},
): AclBinding {
  return {
    resourceType,
    resourceName,
    patternType: "LITERAL",
    principal: RUNNER,
    host: "*",
    operation,
    permission: "ALLOW",
    ...more,
  };
}

/** Exactly what the runner needs. */
const COMPLETE: AclBinding[] = [
  acl("TOPIC", "raw_orders", "READ"),
  acl("TOPIC", "orders", "WRITE"),
  acl("GROUP", APP, "READ"),
  acl("TRANSACTIONAL_ID", APP, "WRITE", { patternType: "PREFIXED" }),
];

const without = (i: number, extra: AclBinding[] = []) => [
  ...COMPLETE.filter((_, j) => j !== i),
  ...extra,
];

function evaluate(acls: AclBinding[], a: RunnerTopics = artifact) {
  return evaluateRunnerPermissions({
    observation: { principal: RUNNER, acls, unread: null },
    changed: [{ model: "orders", artifact: a }],
    all: [a],
    bootstrap: "broker:9095",
  })!;
}

/** `TYPE name OPERATION reason` of each missing permission, sorted. */
const missingOf = (acls: AclBinding[], a: RunnerTopics = artifact) =>
  evaluate(acls, a).missing.map((m) =>
    `${m.resource_type} ${m.resource_name} ${m.operation} ${m.reason}`
  ).sort();

const CASES: Array<
  { name: string; acls: AclBinding[]; artifact?: RunnerTopics; missing: string[] }
> = [
  { name: "exactly the needed grants", acls: COMPLETE, missing: [] },
  {
    name: "no ACL at all: the stronger operation per resource is named (it implies DESCRIBE)",
    acls: [],
    missing: [
      `GROUP ${APP} READ no_acl`,
      "TOPIC orders WRITE no_acl",
      "TOPIC raw_orders READ no_acl",
      `TRANSACTIONAL_ID ${APP} WRITE no_acl`,
    ],
  },
  { name: "the input's READ removed", acls: without(0), missing: ["TOPIC raw_orders READ no_acl"] },
  { name: "the output's WRITE removed", acls: without(1), missing: ["TOPIC orders WRITE no_acl"] },
  { name: "the group's READ removed", acls: without(2), missing: [`GROUP ${APP} READ no_acl`] },
  {
    name: "the transactional IDs' prefix removed",
    acls: without(3),
    missing: [`TRANSACTIONAL_ID ${APP} WRITE no_acl`],
  },
  {
    name: "the dead-letter topic is needed when on_invalid is dead_letter",
    acls: COMPLETE,
    artifact: withDeadLetter,
    missing: ["TOPIC orders_dlq WRITE no_acl"],
  },
  {
    name: "the dead-letter topic granted",
    acls: [...COMPLETE, acl("TOPIC", "orders_dlq", "WRITE")],
    artifact: withDeadLetter,
    missing: [],
  },
  {
    name: "a DENY of User:* wins over the runner's ALLOW",
    acls: [
      ...COMPLETE,
      acl("TOPIC", "raw_orders", "READ", { principal: "User:*", permission: "DENY" }),
    ],
    missing: ["TOPIC raw_orders READ denied"],
  },
  {
    name: "a DENY of ALL denies every operation, DESCRIBE included",
    acls: [...COMPLETE, acl("TOPIC", "orders", "ALL", { permission: "DENY" })],
    missing: ["TOPIC orders DESCRIBE denied", "TOPIC orders WRITE denied"],
  },
  {
    name: "a DENY of DESCRIBE alone is named although WRITE is allowed",
    acls: [...COMPLETE, acl("TOPIC", "orders", "DESCRIBE", { permission: "DENY" })],
    missing: ["TOPIC orders DESCRIBE denied"],
  },
  {
    name: "a DENY limited to one host counts (the runner's address is not known)",
    acls: [...COMPLETE, acl("GROUP", APP, "READ", { permission: "DENY", host: "10.0.0.9" })],
    missing: [`GROUP ${APP} READ denied`],
  },
  {
    name: "a DENY of a prefix covering the topic counts",
    acls: [
      ...COMPLETE,
      acl("TOPIC", "raw_", "READ", { permission: "DENY", patternType: "PREFIXED" }),
    ],
    missing: ["TOPIC raw_orders READ denied"],
  },
  {
    name: "a DENY of one transactional ID under the application ID's prefix counts",
    acls: [...COMPLETE, acl("TRANSACTIONAL_ID", `${APP}-x-1`, "WRITE", { permission: "DENY" })],
    missing: [`TRANSACTIONAL_ID ${APP} WRITE denied`],
  },
  {
    name: "a DENY of another application's transactional IDs does not count",
    acls: [
      ...COMPLETE,
      acl("TRANSACTIONAL_ID", "other-app", "WRITE", {
        permission: "DENY",
        patternType: "PREFIXED",
      }),
    ],
    missing: [],
  },
  {
    name: "a DENY of another principal does not count",
    acls: [
      ...COMPLETE,
      acl("TOPIC", "raw_orders", "READ", { principal: "User:someone", permission: "DENY" }),
    ],
    missing: [],
  },
  {
    name: "an ALLOW limited to one host proves nothing",
    acls: without(0, [acl("TOPIC", "raw_orders", "READ", { host: "10.0.0.9" })]),
    missing: ["TOPIC raw_orders READ host_only"],
  },
  {
    name: "ALLOWs of User:* count",
    acls: COMPLETE.map((b) => ({ ...b, principal: "User:*" })),
    missing: [],
  },
  {
    name: "ALLOWs of another principal do not count",
    acls: COMPLETE.map((b) => ({ ...b, principal: "User:someone" })),
    missing: [
      `GROUP ${APP} READ no_acl`,
      "TOPIC orders WRITE no_acl",
      "TOPIC raw_orders READ no_acl",
      `TRANSACTIONAL_ID ${APP} WRITE no_acl`,
    ],
  },
  {
    name: "the wildcard resource `*` with ALL allows everything",
    acls: ["TOPIC", "GROUP", "TRANSACTIONAL_ID"].map((t) =>
      acl(t as AclBinding["resourceType"], "*", "ALL")
    ),
    missing: [],
  },
  {
    name: "a topic prefix covering the topic allows it",
    acls: without(0, [acl("TOPIC", "raw_", "READ", { patternType: "PREFIXED" })]),
    missing: [],
  },
  {
    name: "a prefix that is not the topic's does not",
    acls: without(0, [acl("TOPIC", "raw_orders_v2", "READ", { patternType: "PREFIXED" })]),
    missing: ["TOPIC raw_orders READ no_acl"],
  },
  {
    name: "one literal transactional ID does not prove the prefix (EOS v2 names are made at start)",
    acls: without(3, [acl("TRANSACTIONAL_ID", `${APP}-0-1`, "WRITE")]),
    missing: [`TRANSACTIONAL_ID ${APP} WRITE no_acl`],
  },
  {
    name: "the transactional prefix `<application ID>-` proves it",
    acls: without(3, [acl("TRANSACTIONAL_ID", `${APP}-`, "WRITE", { patternType: "PREFIXED" })]),
    missing: [],
  },
  {
    name: "WRITE on the input does not give READ",
    acls: without(0, [acl("TOPIC", "raw_orders", "WRITE")]),
    missing: ["TOPIC raw_orders READ no_acl"],
  },
  {
    name: "DESCRIBE alone does not give READ",
    acls: without(0, [acl("TOPIC", "raw_orders", "DESCRIBE")]),
    missing: ["TOPIC raw_orders READ no_acl"],
  },
  {
    name: "a binding of another resource type with the same name does not count",
    acls: without(2, [acl("TOPIC", APP, "READ")]),
    missing: [`GROUP ${APP} READ no_acl`],
  },
];

for (const c of CASES) {
  Deno.test(`runner permissions: ${c.name}`, () => {
    assert.deepEqual(missingOf(c.acls, c.artifact), c.missing);
  });
}

const EXCESS: Array<{ name: string; extra: AclBinding; warns: RegExp | null }> = [
  {
    name: "WRITE on its own input",
    extra: acl("TOPIC", "raw_orders", "WRITE"),
    warns: /WRITE on TOPIC raw_orders, where the runners need only READ and DESCRIBE/,
  },
  {
    name: "ALL on its group",
    extra: acl("GROUP", APP, "ALL"),
    warns: /ALL on GROUP sluice-shop-orders: every operation/,
  },
  {
    name: "READ on a topic no runner uses",
    extra: acl("TOPIC", "payments", "READ"),
    warns: /READ on TOPIC payments, which no runner of this project uses/,
  },
  {
    name: "READ on every topic",
    extra: acl("TOPIC", "*", "READ"),
    warns: /READ on TOPIC \*: wider than the resources the runners use \(raw_orders\)/,
  },
  {
    name: "a cluster grant",
    extra: acl("CLUSTER", "kafka-cluster", "IDEMPOTENT_WRITE"),
    warns: /IDEMPOTENT_WRITE on CLUSTER kafka-cluster, which no runner/,
  },
  {
    name: "an explicit DESCRIBE on its output is not excess",
    extra: acl("TOPIC", "orders", "DESCRIBE"),
    warns: null,
  },
  {
    name: "a grant of User:* is not the runner's excess",
    extra: acl("TOPIC", "payments", "READ", { principal: "User:*" }),
    warns: null,
  },
  {
    name: "a DENY is never excess",
    extra: acl("TOPIC", "payments", "READ", { permission: "DENY" }),
    warns: null,
  },
];

for (const c of EXCESS) {
  Deno.test(`runner permissions, excess: ${c.name}`, () => {
    const result = evaluate([...COMPLETE, c.extra]);
    assert.deepEqual(result.missing, []);
    const warnings = runnerPermissionWarnings(result);
    if (c.warns === null) assert.deepEqual(warnings, []);
    else {
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0], c.warns);
      assert.match(warnings[0], /^Warning: the runner principal User:orders-runner may /);
    }
  });
}

Deno.test("runner permissions: another runner's grants of the same project are not excess", () => {
  const other: RunnerTopics = {
    application_id: "sluice-shop-refunds",
    input: { topic: "raw_refunds" },
    output: { topic: "refunds" },
  };
  const result = evaluateRunnerPermissions({
    observation: {
      principal: RUNNER,
      acls: [...COMPLETE, acl("TOPIC", "raw_refunds", "READ")],
      unread: null,
    },
    changed: [{ model: "orders", artifact }],
    all: [artifact, other],
    bootstrap: "broker:9095",
  })!;
  assert.deepEqual(result.excess, []);
});

Deno.test("runner permissions: each missing permission is a blocker naming resource type, name and operation, with its grant", () => {
  const blockers = runnerPermissionBlockers(evaluate(without(0)));
  assert.equal(blockers.length, 1);
  const [b] = blockers;
  assert.equal(b.code, "BLOCKED_RUNNER_PERMISSION");
  assert.equal(b.model, "orders");
  assert.match(
    b.message,
    /User:orders-runner may not READ TOPIC raw_orders, its input topic: no ACL allows it/,
  );
  assert.equal(
    b.evidence.fix,
    "kafka-acls.sh --bootstrap-server broker:9095 --command-config ADMIN.properties --add --allow-principal 'User:orders-runner' --operation READ --topic 'raw_orders'",
  );
  const txn = runnerPermissionBlockers(evaluate(without(3)))[0];
  assert.match(
    String(txn.evidence.fix),
    /--transactional-id 'sluice-shop-orders' --resource-pattern-type prefixed$/,
  );
  const denied = runnerPermissionBlockers(
    evaluate([
      ...COMPLETE,
      acl("TOPIC", "orders", "WRITE", { permission: "DENY", host: "10.0.0.9" }),
    ]),
  )[0];
  assert.match(
    String(denied.evidence.fix),
    /--remove --deny-principal 'User:orders-runner' --deny-host '10.0.0.9' --operation WRITE --topic 'orders'$/,
  );
});

Deno.test("runner permissions: ACLs that could not be read block with BLOCKED_RUNNER_PERMISSION_UNVERIFIED, saying why", () => {
  const result = evaluateRunnerPermissions({
    observation: {
      principal: RUNNER,
      acls: null,
      unread: "sluice's admin principal may not describe ACLs",
    },
    changed: [{ model: "orders", artifact }],
    all: [artifact],
    bootstrap: "broker:9095",
  })!;
  const blockers = runnerPermissionBlockers(result);
  assert.deepEqual(blockers.map((b) => b.code), ["BLOCKED_RUNNER_PERMISSION_UNVERIFIED"]);
  assert.match(
    blockers[0].message,
    /User:orders-runner cannot be proven before creating or replacing orders: sluice's admin principal may not describe ACLs/,
  );
});

Deno.test("runner permissions: nothing to prove without an observation (PLAINTEXT) or without a create or replacement", () => {
  const artifacts = [{ model: "orders", artifact }];
  assert.equal(
    checkRunnerPermissions(null, {
      actions: [{ type: "create_runner", model: "orders" }],
      artifacts,
      bootstrap: "b",
    }),
    null,
  );
  const observation = { principal: RUNNER, acls: [], unread: null };
  assert.equal(
    checkRunnerPermissions(observation, {
      actions: [{ type: "create_topic" }],
      artifacts,
      bootstrap: "b",
    }),
    null,
  );
  const created = checkRunnerPermissions(observation, {
    actions: [{ type: "create_runner", model: "orders" }],
    artifacts,
    bootstrap: "b",
  })!;
  assert.deepEqual(created.section.checked, ["orders"]);
  assert.equal(created.blockers.length, 4);
  const replaced = checkRunnerPermissions({ ...observation, acls: COMPLETE }, {
    actions: [{ type: "replace_runner_predicate", model: "orders" }],
    artifacts,
    bootstrap: "b",
  })!;
  assert.deepEqual(replaced.blockers, []);
});
