/**
 * The read behind the runner-permission proof (`lib/validation/runner_permissions.ts`): under
 * `kafka.security`, the ACL bindings the broker lists for the runner's principal and for
 * `User:*`, read by sluice's admin principal through the Kafka port. Read-only.
 *
 * Nothing is read for a project without security (null: the plan is unchanged). When the
 * bindings cannot be read the observation says why, and the planner blocks with
 * `BLOCKED_RUNNER_PERMISSION_UNVERIFIED`: the admin principal may not describe ACLs (Kafka's
 * CLUSTER_AUTHORIZATION_FAILED: it needs DESCRIBE on the cluster), the plan is offline, the
 * runner's principal is a client certificate's whose name the project does not declare
 * (`kafka.security.runner.principal`: the broker's `ssl.principal.mapping.rules` make it, and
 * sluice cannot read them), or the port has no ACL read.
 *
 * @example
 * ```ts
 * import { observeRunnerAcls } from "./runner_acls.ts";
 * import { PLAINTEXT } from "../project/kafka_security.ts";
 * // a project without security reads nothing
 * console.log(await observeRunnerAcls(null as never, PLAINTEXT, false)); // null
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import type { KafkaSecurity } from "../project/kafka_security.ts";
import type { KafkaPort } from "../providers/kafka/port.ts";
import {
  checkRunnerPermissions,
  type RunnerAclObservation,
} from "../validation/runner_permissions.ts";
import { blockerError } from "../validation/blocker.ts";
import type { Plan } from "../plan/plan.ts";

/** The runner principal's ACLs as the broker lists them, or why they are not known. */
export async function observeRunnerAcls(
  kafka: KafkaPort,
  security: KafkaSecurity,
  offline: boolean,
): Promise<RunnerAclObservation | null> {
  if (security.protocol === "PLAINTEXT") return null;
  const username = security.runner?.sasl?.username ?? null;
  // a certificate's principal is the broker's to make: only a declared one can be checked
  const declared = security.runner?.certificate?.principal ?? null;
  if (username === null && declared === null) {
    return {
      principal: null,
      acls: null,
      unread: security.runner?.certificate
        ? "the runner authenticates with a client certificate, whose principal name the broker makes (ssl.principal.mapping.rules) and sluice cannot read: declare it as kafka.security.runner.principal"
        : "kafka.security.runner names no principal",
    };
  }
  const principal = declared ?? `User:${username}`;
  const unread = (why: string): RunnerAclObservation => ({ principal, acls: null, unread: why });
  if (offline) return unread("an offline plan does not read the broker's ACLs: plan online");
  if (!kafka.describeAcls) return unread("this Kafka port cannot describe ACLs");
  try {
    const own = await kafka.describeAcls(principal);
    const everyone = await kafka.describeAcls("User:*");
    return { principal, acls: [...own, ...everyone], unread: null };
  } catch (error) {
    if (error instanceof SluiceError && error.code === "ENV_KAFKA_DENIED") {
      return unread(
        `sluice's admin principal may not describe ACLs (it needs DESCRIBE on the CLUSTER resource; Kafka answered: ${error.message})`,
      );
    }
    throw error;
  }
}

/**
 * The proof again at apply, right before the first mutation of a create or a replacement
 * started from a plan file: an ACL removed between plan and apply blocks with
 * `BLOCKED_RUNNER_PERMISSION` (or `BLOCKED_RUNNER_PERMISSION_UNVERIFIED` when the ACLs can no
 * longer be read), having written and created nothing. A plan without a `runner_permissions`
 * section (no `kafka.security`, no runner started) reads nothing. An operation already pending is
 * not checked here: a runner the broker refuses mid-operation exits with
 * `KAFKA_AUTHORIZATION_FAILED`, and `state resume` restarts it once the grant is back.
 *
 * @example
 * ```ts
 * import { recheckRunnerAcls } from "./runner_acls.ts";
 * import { PLAINTEXT } from "../project/kafka_security.ts";
 * await recheckRunnerAcls(null as never, PLAINTEXT, { actions: [], artifacts: [] }, "b:9092");
 * ```
 */
export async function recheckRunnerAcls(
  kafka: KafkaPort,
  security: KafkaSecurity,
  plan: Pick<Plan, "actions" | "artifacts" | "runner_permissions">,
  bootstrap: string,
): Promise<void> {
  if (!plan.runner_permissions) return;
  const observation = await observeRunnerAcls(kafka, security, false);
  const checked = checkRunnerPermissions(observation, {
    actions: plan.actions,
    artifacts: plan.artifacts,
    bootstrap,
  });
  if (checked && checked.blockers.length > 0) throw blockerError(checked.blockers);
}
