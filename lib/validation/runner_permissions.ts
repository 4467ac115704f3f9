/**
 * Least privilege of the runner's principal, proven from Kafka's own authorization answers
 * before a create or a replacement (issue 29): the ACL bindings the broker lists for the runner's
 * principal and for `User:*` (DescribeAcls, read by sluice's admin principal) are evaluated the
 * way Kafka's StandardAuthorizer evaluates them against what a runner does:
 *
 * | resource                                | operations        | why (the runner's calls)                                           |
 * | --------------------------------------- | ----------------- | ------------------------------------------------------------------ |
 * | TOPIC input (literal)                   | READ, DESCRIBE    | fetch, listOffsets, describeTopics of the identity gate            |
 * | TOPIC output, dead-letter (literal)     | WRITE, DESCRIBE   | the transactional produce, describeTopics of the identity gate     |
 * | GROUP application ID (literal)          | READ, DESCRIBE    | join, offset fetch and commit (init-offsets, EOS offset commits)   |
 * | TRANSACTIONAL_ID `<application ID>-`... | WRITE, DESCRIBE   | EOS v2: `<application ID>-<process UUID>-<thread>`, not known ahead |
 *
 * The identity gate's `describeCluster` needs no ACL (Kafka answers DescribeCluster to every
 * authenticated principal; only the authorized-operations list it does not ask for needs
 * DESCRIBE on the cluster), and a transactional producer needs no IDEMPOTENT_WRITE on the
 * cluster (its WRITE on the transactional ID suffices): neither is required.
 *
 * Rules, as the authorizer has them: a DENY wins over any ALLOW; an ALLOW of ALL implies every
 * operation, and READ, WRITE, DELETE or ALTER imply DESCRIBE (a DENY denies only its own
 * operation, or every one for ALL); a binding applies to the runner's principal or to `User:*`;
 * a LITERAL pattern is its name or `*`, a PREFIXED one every name starting with it. A
 * transactional-ID requirement is every name starting with `<application ID>-`, so only a
 * binding covering all of them proves it (`*`, or a prefix of it), while a DENY that could touch
 * any of them counts. Hosts: the runner's address is not known before its container exists, so
 * an ALLOW limited to one host proves nothing, and a DENY limited to one host counts.
 *
 * What cannot be seen: super users (`super.users`) and `allow.everyone.if.no.acl.found` are broker
 * settings, not ACLs: a runner that relies on them is reported as missing its grants. A principal
 * of a client certificate (SSL) is made by the broker's `ssl.principal.mapping.rules`, which
 * sluice cannot read: its permissions are unverified.
 *
 * Pure: no I/O. The read is `lib/runtime/runner_acls.ts`; the planner calls
 * {@link checkRunnerPermissions} at one place.
 *
 * @example
 * ```ts
 * import { runnerRequirements } from "./runner_permissions.ts";
 * const needs = runnerRequirements({
 *   application_id: "sluice-shop-orders",
 *   input: { topic: "raw_orders" },
 *   output: { topic: "orders" },
 * });
 * console.log(needs.map((r) => `${r.resourceType} ${r.name} ${r.operation}`));
 * ```
 * @module
 */
import type { AclBinding, AclResourceType } from "../providers/kafka/port.ts";
import type { RunnerArtifact } from "../artifact/artifact.ts";
import { type Blocker, blocker } from "./blocker.ts";

/** What the planner is given: the runner's principal and the ACLs read for it. */
export interface RunnerAclObservation {
  /** `User:<name>`; null when sluice cannot name the runner's principal (see `unread`). */
  principal: string | null;
  /** The bindings of `principal` and of `User:*`; null when they were not read. */
  acls: AclBinding[] | null;
  /** Why `acls` is null, in words (the admin principal may not describe ACLs, offline, ...). */
  unread: string | null;
}

/** One permission a runner needs. */
export interface RunnerRequirement {
  /** The resource type. */
  resourceType: Extract<AclResourceType, "TOPIC" | "GROUP" | "TRANSACTIONAL_ID">;
  /** The resource's name; for `prefixed`, the prefix every needed name starts with. */
  name: string;
  /** `literal`: the one resource; `prefixed`: every resource whose name starts with `name`. */
  scope: "literal" | "prefixed";
  /** The operation. */
  operation: "READ" | "WRITE" | "DESCRIBE";
  /** What the runner does with it. */
  why: string;
  /** The name a grant uses (the application ID for its transactional IDs). */
  grantName: string;
}

/** A permission the runner's principal lacks, with the way out. */
export interface MissingPermission {
  /** The model whose runner needs it. */
  model: string;
  /** The resource type. */
  resource_type: RunnerRequirement["resourceType"];
  /** The resource's name (the application ID for its transactional IDs' prefix). */
  resource_name: string;
  /** LITERAL, or PREFIXED for the transactional IDs. */
  pattern: "LITERAL" | "PREFIXED";
  /** The operation. */
  operation: RunnerRequirement["operation"];
  /** `no_acl`: nothing allows it; `denied`: a DENY binding refuses it; `host_only`: allowed only from one host. */
  reason: "no_acl" | "denied" | "host_only";
  /** The binding that denies it or allows it from one host only. */
  binding: AclBinding | null;
  /** What the runner does with it. */
  why: string;
  /** The `kafka-acls.sh` command that grants it (or removes the DENY). */
  fix: string;
}

/** A grant the runner's principal has and no runner of the project needs (a warning). */
export interface ExcessPermission {
  /** The binding. */
  binding: AclBinding;
  /** Why it is more than needed. */
  why: string;
}

/** The plan's section: what was checked and what was found (display and blockers). */
export interface RunnerPermissions {
  /** The runner's principal, or null when it cannot be named. */
  principal: string | null;
  /** The models whose create or replacement was checked. */
  checked: string[];
  /** Why nothing could be proven (null: the ACLs were read and evaluated). */
  unverified: string | null;
  /** What is missing (each one is a `BLOCKED_RUNNER_PERMISSION` blocker). */
  missing: MissingPermission[];
  /** Grants beyond the job (warnings in the review). */
  excess: ExcessPermission[];
}

/** The part of an artifact the requirements come from. */
export type RunnerTopics = Pick<
  RunnerArtifact,
  "application_id" | "input" | "output" | "on_invalid"
>;

/** Every permission one runner needs (see the module's table). */
export function runnerRequirements(artifact: RunnerTopics): RunnerRequirement[] {
  const app = artifact.application_id;
  const lit = (
    resourceType: RunnerRequirement["resourceType"],
    name: string,
    ops: Array<RunnerRequirement["operation"]>,
    why: string,
  ): RunnerRequirement[] =>
    ops.map((operation) => ({
      resourceType,
      name,
      scope: "literal",
      operation,
      why,
      grantName: name,
    }));
  return [
    ...lit("TOPIC", artifact.input.topic, ["READ", "DESCRIBE"], "its input topic"),
    ...lit("TOPIC", artifact.output.topic, ["WRITE", "DESCRIBE"], "its output topic"),
    ...(artifact.on_invalid
      ? lit("TOPIC", artifact.on_invalid.topic, ["WRITE", "DESCRIBE"], "its dead-letter topic")
      : []),
    ...lit("GROUP", app, ["READ", "DESCRIBE"], "its consumer group (the application ID)"),
    ...(["WRITE", "DESCRIBE"] as const).map((operation): RunnerRequirement => ({
      resourceType: "TRANSACTIONAL_ID",
      name: `${app}-`,
      scope: "prefixed",
      operation,
      why: "its exactly-once transactional IDs (prefixed by the application ID)",
      grantName: app,
    })),
  ];
}

const IMPLY_DESCRIBE = new Set(["READ", "WRITE", "DELETE", "ALTER"]);

/** Whether an ALLOW of `granted` allows `needed` (Kafka's implied operations). */
function allows(granted: string, needed: string): boolean {
  return granted === needed || granted === "ALL" ||
    (needed === "DESCRIBE" && IMPLY_DESCRIBE.has(granted));
}

/** Whether a binding's pattern matches every resource the requirement names. */
function covers(b: AclBinding, r: RunnerRequirement): boolean {
  if (b.resourceType !== r.resourceType) return false;
  if (b.patternType === "LITERAL") {
    return b.resourceName === "*" || (r.scope === "literal" && b.resourceName === r.name);
  }
  if (b.patternType === "PREFIXED") return r.name.startsWith(b.resourceName);
  return false;
}

/** Whether a binding's pattern matches at least one resource the requirement names. */
function touches(b: AclBinding, r: RunnerRequirement): boolean {
  if (covers(b, r)) return true;
  if (b.resourceType !== r.resourceType || r.scope !== "prefixed") return false;
  return (b.patternType === "LITERAL" || b.patternType === "PREFIXED") &&
    b.resourceName.startsWith(r.name);
}

/** How one requirement stands under the bindings of the principal and `User:*`. */
function judge(
  r: RunnerRequirement,
  acls: AclBinding[],
): { ok: true } | { ok: false; reason: MissingPermission["reason"]; binding: AclBinding | null } {
  const deny = acls.find((b) =>
    b.permission === "DENY" && touches(b, r) &&
    (b.operation === r.operation || b.operation === "ALL")
  );
  if (deny) return { ok: false, reason: "denied", binding: deny };
  const granting = acls.filter((b) =>
    b.permission === "ALLOW" && covers(b, r) && allows(b.operation, r.operation)
  );
  if (granting.some((b) => b.host === "*")) return { ok: true };
  if (granting.length > 0) return { ok: false, reason: "host_only", binding: granting[0] };
  return { ok: false, reason: "no_acl", binding: null };
}

/** The `kafka-acls.sh` resource options of a pattern. */
function resourceOptions(type: string, name: string, pattern: string): string {
  const flag = type === "TOPIC"
    ? "--topic"
    : type === "GROUP"
    ? "--group"
    : type === "TRANSACTIONAL_ID"
    ? "--transactional-id"
    : "--cluster";
  const named = flag === "--cluster" ? flag : `${flag} '${name}'`;
  return pattern === "PREFIXED" ? `${named} --resource-pattern-type prefixed` : named;
}

/** The command that grants a requirement, or that removes the DENY refusing it. */
function fixOf(
  r: RunnerRequirement,
  principal: string,
  bootstrap: string,
  deny: AclBinding | null,
): string {
  const head = `kafka-acls.sh --bootstrap-server ${bootstrap} --command-config ADMIN.properties`;
  if (deny) {
    return `${head} --remove --deny-principal '${deny.principal}' --deny-host '${deny.host}' --operation ${deny.operation} ${
      resourceOptions(deny.resourceType, deny.resourceName, deny.patternType)
    }`;
  }
  return `${head} --add --allow-principal '${principal}' --operation ${r.operation} ${
    resourceOptions(r.resourceType, r.grantName, r.scope === "prefixed" ? "PREFIXED" : "LITERAL")
  }`;
}

/** Whether a binding is exactly one the project's runners need (no wider resource, no other operation). */
function isExactGrant(b: AclBinding, needs: RunnerRequirement[]): boolean {
  return needs.some((r) =>
    b.resourceType === r.resourceType &&
    (r.scope === "literal"
      ? b.patternType === "LITERAL" && b.resourceName === r.name
      : b.patternType === "PREFIXED" &&
        (b.resourceName === r.name || b.resourceName === r.grantName)) &&
    needs.some((o) =>
      o.resourceType === r.resourceType && o.name === r.name && o.operation === b.operation
    )
  );
}

/** Why an ALLOW binding of the runner's own principal is more than its job needs. */
function excessWhy(b: AclBinding, needs: RunnerRequirement[]): string {
  const target = `${b.resourceType} ${
    b.patternType === "PREFIXED" ? `${b.resourceName}* (prefixed)` : b.resourceName
  }`;
  if (b.operation === "ALL") {
    return `ALL on ${target}: every operation, where the runners need only ${neededOn(b, needs)}`;
  }
  const on = needs.filter((r) => covers(b, r));
  if (on.length === 0) return `${b.operation} on ${target}, which no runner of this project uses`;
  const exact = on.some((r) => r.operation === b.operation);
  if (!exact) {
    return `${b.operation} on ${target}, where the runners need only ${neededOn(b, needs)}`;
  }
  return `${b.operation} on ${target}: wider than the resources the runners use (${
    [
      ...new Set(
        on.filter((r) => r.operation === b.operation).map((r) =>
          r.scope === "prefixed" ? `${r.grantName} (prefixed)` : r.name
        ),
      ),
    ].join(
      ", ",
    )
  })`;
}

function neededOn(b: AclBinding, needs: RunnerRequirement[]): string {
  const ops = [...new Set(needs.filter((r) => covers(b, r)).map((r) => r.operation))];
  return ops.length > 0 ? ops.join(" and ") : "nothing";
}

/** What {@link checkRunnerPermissions} is given. */
export interface RunnerPermissionCheck {
  /** The observation (principal and bindings). */
  observation: RunnerAclObservation;
  /** The runners created or replaced by the plan: their model and artifact. */
  changed: Array<{ model: string; artifact: RunnerTopics }>;
  /** Every runner of the project (the principal serves them all): what is not excess. */
  all: RunnerTopics[];
  /** The bootstrap address the grant commands name. */
  bootstrap: string;
}

/**
 * Evaluate the runner principal's permissions for the plan's creates and replacements; null
 * when the plan creates and replaces no runner (nothing to prove).
 */
export function evaluateRunnerPermissions(check: RunnerPermissionCheck): RunnerPermissions | null {
  const { observation, changed } = check;
  if (changed.length === 0) return null;
  const checked = changed.map((c) => c.model);
  const principal = observation.principal;
  if (principal === null || observation.acls === null) {
    return {
      principal,
      checked,
      unverified: observation.unread ?? "the runner principal's ACLs were not read",
      missing: [],
      excess: [],
    };
  }
  const acls = observation.acls.filter((b) =>
    b.principal === principal || b.principal === "User:*"
  );
  const missing: MissingPermission[] = [];
  for (const { model, artifact } of changed) {
    const needs = runnerRequirements(artifact);
    const judged = needs.map((r) => ({ r, j: judge(r, acls) }));
    for (const { r, j } of judged) {
      if (j.ok) continue;
      // granting the stronger operation also grants DESCRIBE: name DESCRIBE only when it is
      // the one missing, or explicitly denied
      if (
        r.operation === "DESCRIBE" && j.reason !== "denied" &&
        judged.some((o) =>
          o.r.resourceType === r.resourceType && o.r.name === r.name &&
          o.r.operation !== "DESCRIBE" && !o.j.ok
        )
      ) continue;
      missing.push({
        model,
        resource_type: r.resourceType,
        resource_name: r.scope === "prefixed" ? r.grantName : r.name,
        pattern: r.scope === "prefixed" ? "PREFIXED" : "LITERAL",
        operation: r.operation,
        reason: j.reason,
        binding: j.binding,
        why: r.why,
        fix: fixOf(r, principal, check.bootstrap, j.reason === "denied" ? j.binding : null),
      });
    }
  }
  const needs = check.all.flatMap(runnerRequirements);
  const excess = observation.acls
    .filter((b) => b.principal === principal && b.permission === "ALLOW" && !isExactGrant(b, needs))
    .map((binding) => ({ binding, why: excessWhy(binding, needs) }));
  return { principal, checked, unverified: null, missing, excess };
}

/** The words of one missing permission, naming the resource type, its name and the operation. */
function missingWords(m: MissingPermission, principal: string): string {
  const resource = `${m.resource_type} ${m.resource_name}${
    m.pattern === "PREFIXED" ? " (prefixed)" : ""
  }`;
  const why = m.reason === "denied"
    ? `a DENY binding refuses it (${m.binding?.principal} ${m.binding?.operation} from host ${m.binding?.host} on ${m.binding?.resourceType} ${m.binding?.resourceName} ${m.binding?.patternType})`
    : m.reason === "host_only"
    ? `it is allowed only from host ${m.binding?.host}, and the runner's address is not known before its container exists`
    : "no ACL allows it";
  return `the runner principal ${principal} may not ${m.operation} ${resource}, ${m.why}: ${why}`;
}

/** The blockers of an evaluation: one per missing permission, or one when nothing could be proven. */
export function runnerPermissionBlockers(p: RunnerPermissions): Blocker[] {
  if (p.unverified !== null) {
    return [blocker(
      "BLOCKED_RUNNER_PERMISSION_UNVERIFIED",
      `the permissions of the runner principal${
        p.principal ? ` ${p.principal}` : ""
      } cannot be proven before creating or replacing ${
        p.checked.join(", ")
      }: ${p.unverified}; nothing is created until they are (docs/runbook.md)`,
      { evidence: { principal: p.principal, models: p.checked, why: p.unverified } },
    )];
  }
  return p.missing.map((m) =>
    blocker(
      "BLOCKED_RUNNER_PERMISSION",
      `${m.model}: ${missingWords(m, p.principal!)}; grant it: ${m.fix}`,
      {
        model: m.model,
        evidence: {
          principal: p.principal,
          resource_type: m.resource_type,
          resource_name: m.resource_name,
          pattern: m.pattern,
          operation: m.operation,
          reason: m.reason,
          fix: m.fix,
        },
      },
    )
  );
}

/** The review's warnings of an evaluation: one per excess grant. */
export function runnerPermissionWarnings(p: RunnerPermissions | null | undefined): string[] {
  return (p?.excess ?? []).map((e) =>
    `Warning: the runner principal ${p!.principal} may ${e.why}${
      e.binding.host === "*" ? "" : ` (from host ${e.binding.host})`
    }: more than its job needs (least privilege); revoke it unless something else uses it.`
  );
}

/**
 * The one call of the planner: the runners the plan's actions create or replace, evaluated,
 * and the blockers to add. Without an observation (a project without `kafka.security`) it
 * returns null and the plan is unchanged.
 *
 * @example
 * ```ts
 * import { checkRunnerPermissions } from "./runner_permissions.ts";
 * console.log(checkRunnerPermissions(null, { actions: [], artifacts: [], bootstrap: "b:9092" })); // null
 * ```
 */
export function checkRunnerPermissions(
  observation: RunnerAclObservation | null | undefined,
  plan: {
    /** The plan's actions: `create_runner` and `replace_runner_predicate` are checked. */
    actions: ReadonlyArray<{ type: string; model?: string }>;
    /** Every compiled artifact of the project. */
    artifacts: ReadonlyArray<{ model: string; artifact: RunnerTopics }>;
    /** The bootstrap address the grant commands name. */
    bootstrap: string;
  },
): { section: RunnerPermissions; blockers: Blocker[] } | null {
  if (!observation) return null;
  const changed = plan.actions.flatMap((a) => {
    if (a.type !== "create_runner" && a.type !== "replace_runner_predicate") return [];
    const found = plan.artifacts.find((x) => x.model === a.model);
    return found ? [{ model: found.model, artifact: found.artifact }] : [];
  });
  const section = evaluateRunnerPermissions({
    observation,
    changed,
    all: plan.artifacts.map((x) => x.artifact),
    bootstrap: plan.bootstrap,
  });
  return section ? { section, blockers: runnerPermissionBlockers(section) } : null;
}
