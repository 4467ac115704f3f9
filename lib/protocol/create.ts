/**
 * The create journey's table, as data, in the same shape as the replacement's
 * ({@link "./replacement.ts"}): each row is one durable step of `apply` of a format-5 plan —
 * what must hold before it, the one mutation or write it makes, the fault site that mutation
 * crosses, and the codes it can give. This order is the only one: `decideCreate`
 * (`lib/runtime/create_next.ts`) walks these rows (topic rows once per topic to create, runner
 * rows once per runner, in the intent's order) on fresh readings to find the one step to take —
 * the step `lib/runtime/create.ts` crosses at the row's site and the row `state runner-status`
 * reports; the fault inventory lists the sites. A row whose `site` is null is the one that may
 * wait (read-only); a row gives only the codes its `blockers` declare.
 *
 * @example
 * ```ts
 * import { CREATE_TABLE } from "./create.ts";
 * for (const row of CREATE_TABLE) console.log(row.step, row.site?.name ?? "(read-only)");
 * ```
 * @module
 */
import type { FaultSite } from "../fault/site.ts";
import { rowOf, siteMaker, siteOf, tableSites } from "./table.ts";
import { MOUNTED_PLAN_WRITE } from "./replacement.ts";
import type { OperationJourney } from "./descriptor.ts";

const site = siteMaker(import.meta.url);

/** The steps of the create journey. */
export type CreateStepKind =
  | "intent"
  | "create_topic"
  | "create_volume"
  | "position_offsets"
  | "write_mounted_plan"
  | "create_container"
  | "write_volume_instance"
  | "start_container"
  | "await_ready"
  | "commit";

/** One row of the create table. */
export interface CreateRow {
  readonly step: CreateStepKind;
  /** What the row does it for: the whole operation, each topic to create, or each runner. */
  readonly per: "operation" | "topic" | "runner";
  /** What must hold (checked on fresh reads) before the step. */
  readonly requires: string;
  /** The one mutation or write of the step. */
  readonly next: string;
  /** The fault site it crosses (null: a read-only wait). */
  readonly site: FaultSite | null;
  /** The codes it can give. */
  readonly blockers: readonly string[];
}

/** The create journey, in order. */
export const CREATE_TABLE: readonly CreateRow[] = [
  {
    step: "intent",
    per: "operation",
    requires:
      "a current sealed plan, no pending operation, no topic to create exists, the runner image and network exist, nothing carries a new application ID",
    next:
      "record the create operation's intent with every identity it will create (volume instances, container names and generations, initial positions)",
    site: site("journal.create_intent", "journal", "record the create operation's intent"),
    blockers: [
      "BLOCKED_OPERATION_PENDING",
      "BLOCKED_UNOWNED_TOPIC",
      "BLOCKED_UNOWNED_RUNTIME",
      "BLOCKED_TOPIC_MISSING",
      "BLOCKED_CREATE_NOT_CONTINUABLE",
      "BLOCKED_STATE_CHANGED",
      "ENV_IMAGE_MISSING",
      "ENV_NETWORK_MISSING",
    ],
  },
  {
    step: "create_topic",
    per: "topic",
    requires:
      "the intent is recorded; the topic is absent (or, continuing, present with the planned partitions: the one whose create response was lost)",
    next: "create the topic with its declared partitions",
    site: site("kafka.create_topic", "provider", "create a topic (once per topic to create)"),
    blockers: ["BLOCKED_UNOWNED_TOPIC"],
  },
  {
    step: "create_volume",
    per: "runner",
    requires:
      "the runner image and network exist; the volume is absent (or carries exactly the recorded instance and this operation's label); no container carries the application ID but this operation's",
    next: "create the state volume labelled with the recorded instance UUID",
    site: site("docker.create_volume", "provider", "create the labelled state volume"),
    blockers: ["ENV_IMAGE_MISSING", "ENV_NETWORK_MISSING", "BLOCKED_UNOWNED_RUNTIME"],
  },
  {
    step: "position_offsets",
    per: "runner",
    requires:
      "the input and output topics exist; no committed offsets (or exactly the recorded positions); the recorded positions are retained",
    next: "position the consumer group at the recorded initial positions (the runner never resets)",
    site: site(
      "kafka.position_offsets",
      "provider",
      "set the new consumer group's committed offsets before the runner first starts",
    ),
    blockers: ["BLOCKED_TOPIC_MISSING", "BLOCKED_UNOWNED_RUNTIME", "BLOCKED_RETENTION_LOSS"],
  },
  {
    step: "write_mounted_plan",
    per: "runner",
    requires: "the cluster and topic IDs were read",
    next: "write the content-addressed mounted plan file",
    site: MOUNTED_PLAN_WRITE,
    blockers: ["BLOCKED_TOPIC_MISSING", "STATE_CORRUPT_MOUNTED_PLAN"],
  },
  {
    step: "create_container",
    per: "runner",
    requires:
      "the mounted plan file is written; no container carries the application ID (or exactly this operation's)",
    next: "create the stopped runner container with its generation labels",
    site: site("docker.create_runner", "provider", "create the first runner container"),
    blockers: ["BLOCKED_UNOWNED_RUNTIME"],
  },
  {
    step: "write_volume_instance",
    per: "runner",
    requires: "the runner container was created and never started",
    next:
      "write the volume's instance file through that container's own mount (no helper container)",
    site: site(
      "docker.write_volume_instance",
      "provider",
      "write the state volume's instance file through the created runner container",
    ),
    blockers: ["BLOCKED_UNOWNED_RUNTIME"],
  },
  {
    step: "start_container",
    per: "runner",
    requires:
      "the container was created and never started (or exited before RUNNING with its positions untouched; or was stopped from outside — killed by a Docker daemon's shutdown or a docker kill, not OOM, before a final status of its own; or closed cleanly by a TERM, its own CLOSED status — whatever its positions: it continues from its committed offsets, its open transaction aborted)",
    next: "start it",
    site: site("docker.start_runner", "provider", "start the first runner container"),
    blockers: ["BLOCKED_RUNNER_EXITED"],
  },
  {
    step: "await_ready",
    per: "runner",
    requires: "the container was started",
    next: "wait (read-only, bounded) until it reports RUNNING for its generation and plan",
    site: null,
    blockers: ["BLOCKED_RUNNER_MISSING", "BLOCKED_RUNNER_EXITED", "UNKNOWN_OUTCOME_NOT_READY"],
  },
  {
    step: "commit",
    per: "operation",
    requires: "every runner is RUNNING",
    next: "commit ownership (serial + 1) and clear the operation",
    site: site(
      "state.commit_ownership",
      "state",
      "commit the created resources to ownership (serial + 1) and clear control",
    ),
    blockers: [],
  },
];

/**
 * The row of a step.
 *
 * @example
 * ```ts
 * import { createRow } from "./create.ts";
 * console.log(createRow("create_volume").site?.name); // docker.create_volume
 * ```
 */
export function createRow(step: CreateStepKind): CreateRow {
  return rowOf("create", CREATE_TABLE, step);
}

/**
 * The site a step crosses (a step without one is a programming error).
 *
 * @example
 * ```ts
 * import { createSite } from "./create.ts";
 * console.log(createSite("start_container").name); // docker.start_runner
 * ```
 */
export function createSite(step: Exclude<CreateStepKind, "await_ready">): FaultSite {
  return siteOf("create", CREATE_TABLE, step);
}

/**
 * The fault sites of the create journey, in table order.
 *
 * @example
 * ```ts
 * import { createSites } from "./create.ts";
 * console.log(createSites().length);
 * ```
 */
export function createSites(): FaultSite[] {
  return tableSites(CREATE_TABLE);
}

/**
 * The create journey, as the registry reads it: `apply --plan` of a plan of creates crosses its
 * sites; the first command on a fresh project (`plan`) writes the store's `init`, which its
 * harness runs. Its creates mix with a connector change (applied after them, as their own
 * operation).
 *
 * @example
 * ```ts
 * import { CREATE_JOURNEY } from "./create.ts";
 * console.log(CREATE_JOURNEY.actions); // ["create_topic", "create_runner"]
 * ```
 */
export const CREATE_JOURNEY: OperationJourney<"create"> = {
  name: "create",
  kind: "create",
  actions: ["create_topic", "create_runner"],
  crossings: [{
    by: "create",
    command: "sluice apply --plan FILE (a plan of creates; the same command continues it)",
    sites: createSites,
    transitions: ["init", "commit_ownership", "begin"],
    locks: true,
  }],
  alone: [],
};
