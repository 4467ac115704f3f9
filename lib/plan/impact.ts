/**
 * Downstream impact, the plan's section that says who reads what a change touches (spec: the
 * plan must "expose the affected downstream applications even when the output topic and its
 * schema do not change"). For every model a plan changes — created, predicate replaced, or
 * blocked — it lists:
 *
 * - every external declaration consuming the model, with the columns it reads (and whether the
 *   model still outputs each), whether or not the topic or schema changes;
 * - the models downstream of it (a model whose source topic is its output topic);
 * - online, the live consumer groups holding committed offsets on its output topic, each
 *   marked declared (its group ID is an external declaration's) or undeclared;
 * - the uncertainties: an undeclared live group, consumers that were not observed, and the
 *   reminder that no declaration and no live group is not proof of no consumer.
 *
 * Pure: live groups are read beforehand (read-only) and passed in. External declarations stay
 * metadata: nothing here observes or mutates them.
 *
 * @example
 * ```ts
 * import { planImpact } from "./impact.ts";
 * // const impact = planImpact({ project, changes: [{ model: "eligible_orders", change: "replace_predicate" }], live: null, liveUnobserved: "offline plan" });
 * // impact.models[0].declared[0].external === "fraud_app"
 * ```
 * @module
 */
import type { Project } from "../project/load.ts";

/** Live consumer groups per topic, read once for a plan (read-only). */
export interface LiveConsumers {
  observed_at: string;
  /** topic → groups with committed offsets on it. */
  topics: Record<string, LiveGroup[]>;
}

/** The impact of one changed model. */
export interface ModelImpact {
  /** The changed model. */
  model: string;
  /** What the plan does to it (why it is in the impact section). */
  change: "create" | "replace_predicate" | "blocked" | "remove";
  /** Null for a model that is owned but no longer declared (its topic is not in the project). */
  output_topic: string | null;
  /** The external declarations consuming it. */
  declared: Array<{
    /** The external declaration's name. */
    external: string;
    /** The consumer group ID the declaration names (its own name unless `group_id` is set). */
    group_id: string;
    /** The columns it reads, and whether the desired model still outputs each with that type. */
    columns: Array<{ name: string; type: string; in_output: boolean }>;
  }>;
  /** Models whose source topic is this model's output topic. */
  downstream_models: string[];
  /** Live groups on the output topic, or why they were not observed. */
  live:
    | {
      observed: true;
      observed_at: string;
      /** Each live group with committed offsets on the output topic, declared or not. */
      groups: Array<{
        /** The group ID. */
        group_id: string;
        /** Kafka's state name for the group. */
        state: string;
        /** Members when the group was described; null when that read failed. */
        members: number | null;
        /** Committed offset per partition (decimal strings). */
        committed: Record<string, string>;
        /** The external declaration whose group ID it is; null when undeclared (an uncertainty). */
        declared_as: string | null;
      }>;
    }
    | { observed: false; reason: string };
  /** What the reviewer cannot know from this plan. Never empty for a model with no consumer seen. */
  uncertainties: string[];
}

/** The impact section of a plan. */
export interface PlanImpact {
  /** One entry per changed model. */
  models: ModelImpact[];
}

/** What {@link planImpact} reads. */
export interface ImpactInput {
  project: Project;
  /** The models the plan changes, in plan order. */
  changes: Array<{ model: string; change: ImpactChange }>;
  /** Live groups per output topic, or null when they were not read. */
  live: LiveConsumers | null;
  /** Why `live` is null (e.g. "offline plan"). */
  liveUnobserved: string;
}

/** The consumer group ID an external declaration stands for. */
export function declaredGroupId(ext: { name: string; groupId?: string | null }): string {
  return ext.groupId ?? ext.name;
}

/**
 * Compute the impact section. Pure.
 * @example
 * ```ts
 * function offlineImpact(input: Omit<ImpactInput, "live" | "liveUnobserved">) {
 *   return planImpact({ ...input, live: null, liveUnobserved: "offline plan" }).models;
 * }
 * ```
 */
export function planImpact(input: ImpactInput): PlanImpact {
  const { project, live } = input;
  const seen = new Set<string>();
  const models: ModelImpact[] = [];
  for (const { model, change } of input.changes) {
    if (seen.has(model)) continue;
    seen.add(model);
    const m = project.models.find((x) => x.name === model) ?? null;
    const outputTopic = m?.decl.outputTopic ?? null;
    const externals = project.manifest.externals.filter((e) => e.consumes === model);
    const declared: DeclaredConsumer[] = externals.map((e) => ({
      external: e.name,
      group_id: declaredGroupId(e),
      columns: e.columns.map((c) => ({
        name: c.name,
        type: c.type,
        in_output: m?.outputSchema.some((f) => f.name === c.name && f.type === c.type) ?? false,
      })),
    }));
    const downstream = outputTopic === null
      ? []
      : project.models.filter((x) => x.source.topic === outputTopic).map((x) => x.name);
    const uncertainties: string[] = [];
    let liveSection: ModelImpact["live"];
    if (live !== null && outputTopic !== null) {
      const groups: LiveConsumer[] = (live.topics[outputTopic] ?? []).map((g) => ({
        ...g,
        declared_as: declared.find((d) => d.group_id === g.group_id)?.external ?? null,
      }));
      liveSection = { observed: true, observed_at: live.observed_at, groups };
      for (const g of groups) {
        if (g.declared_as === null) {
          uncertainties.push(
            `consumer group ${g.group_id} holds committed offsets on ${outputTopic} but matches no external declaration: an undeclared consumer that this change also affects`,
          );
        }
      }
      for (const d of declared) {
        if (!groups.some((g) => g.group_id === d.group_id)) {
          uncertainties.push(
            `${d.external} is declared, but no group ${d.group_id} holds committed offsets on ${outputTopic} (not started yet, not committing, or under another group ID)`,
          );
        }
      }
      if (groups.length === 0) {
        uncertainties.push(
          `no live group holds committed offsets on ${outputTopic}; a consumer that commits no offsets (or assigns partitions itself) is invisible to Kafka's group listing`,
        );
      }
    } else {
      const reason = outputTopic === null
        ? "the model is no longer declared"
        : input.liveUnobserved;
      liveSection = { observed: false, reason };
      uncertainties.push(
        `live consumers of ${
          outputTopic ?? `model ${model}`
        } were not observed (${reason}): consumers nobody declared may read it`,
      );
    }
    if (declared.length === 0) {
      uncertainties.push(
        `no external application is declared for ${model}; absence of declarations is not absence of consumers`,
      );
    }
    models.push({
      model,
      change,
      output_topic: outputTopic,
      declared,
      downstream_models: downstream,
      live: liveSection,
      uncertainties,
    });
  }
  return { models };
}

/** One external declaration consuming a changed model. */
export type DeclaredConsumer = ModelImpact["declared"][number];

/** Why a model is in the impact section. */
export type ImpactChange = ModelImpact["change"];

/** A live group on the output topic, marked declared or undeclared. */
export type LiveConsumer = Extract<ModelImpact["live"], { observed: true }>["groups"][number];

/** A consumer group with committed offsets on one topic, as read from the broker. */
export type LiveGroup = Omit<LiveConsumer, "declared_as">;
