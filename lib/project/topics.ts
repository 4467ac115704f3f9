/**
 * Every topic a project declares, with its role: managed sources, model outputs and dead-letter
 * topics (sluice creates and owns them) and external sources (they must exist). The planner
 * decides topic actions from this list and the session describes these names: one list, so
 * that a new kind of topic is planned and observed alike.
 *
 * @example
 * ```ts
 * import { projectTopics } from "./topics.ts";
 * for (const t of projectTopics(project)) console.log(t.topic, t.role, t.partitions);
 * ```
 * @module
 */
import type { Project } from "./load.ts";

/** What a topic is to the project. */
export type TopicRole = "source" | "output" | "dead_letter" | "external";

/** One declared topic. */
export interface DeclaredTopic {
  topic: string;
  role: TopicRole;
  /** Partitions of a managed topic; null for an external one (it keeps its own). */
  partitions: number | null;
}

/**
 * The project's topics in manifest order (sources, then each model's output and dead-letter
 * topic). Names are unique: the manifest rejects a topic used twice.
 * @example
 * ```ts
 * projectTopics(project).filter((t) => t.role !== "external"); // the topics sluice creates
 * ```
 */
export function projectTopics(project: Project): DeclaredTopic[] {
  const out: DeclaredTopic[] = [];
  for (const s of project.manifest.sources) {
    out.push(
      s.kind === "managed"
        ? { topic: s.topic, role: "source", partitions: s.partitions ?? 1 }
        : { topic: s.topic, role: "external", partitions: null },
    );
  }
  for (const m of project.models) {
    out.push({ topic: m.decl.outputTopic, role: "output", partitions: m.outputPartitions });
    if (m.decl.deadLetter) {
      out.push({
        topic: m.decl.deadLetter.topic,
        role: "dead_letter",
        partitions: m.decl.deadLetter.partitions,
      });
    }
  }
  return out;
}
