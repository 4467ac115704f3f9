/**
 * The explicit runner removals of `sluice.yaml` (`lifecycle.runner_removals:`, docs/project-format.md
 * "Taking a job down"): the only way sluice ever takes a runner down. A model that vanished from
 * `models:` is never removed because it vanished (`BLOCKED_RUNNER_REMOVAL`); a removal names it:
 *
 * ```yaml
 * lifecycle:
 *   runner_removals:
 *     - model: big_orders
 * ```
 *
 * A removal applies in every environment (models are the same in each); the plan removes the
 * runner where this project owns it and does nothing where it owns none. Every malformed entry
 * is a located `MANIFEST_*` diagnostic; {@link parseManifest} calls this reader.
 *
 * @example
 * ```ts
 * import { parseManifest } from "./manifest.ts";
 * const m = parseManifest(await Deno.readTextFile("sluice.yaml"), "sluice.yaml");
 * for (const r of m.runnerRemovals) console.log("remove", r.model);
 * ```
 * @module
 */
import type { Span } from "../expr/diagnostic.ts";
import { type MapEntry, YamlReader, type YNode } from "./_yaml_reader.ts";
import { isName } from "./names.ts";

/** An explicit removal of one model's runner. */
export interface RunnerRemovalDecl {
  /** The model whose runner is taken down (no longer under `models:`). */
  model: string;
  span: Span;
}

/**
 * Read `lifecycle.runner_removals:`. The `lifecycle:` mapping itself (its type, its keys) is
 * checked and reported by the connectors' reader; this one reads it again silently.
 */
export function readRunnerRemovals(
  r: YamlReader,
  lifecycle: MapEntry | undefined,
  declaredModels: ReadonlySet<string>,
): RunnerRemovalDecl[] {
  if (!lifecycle) return [];
  const silent = new YamlReader(r.source);
  const list = silent.map(lifecycle.value, "lifecycle", ["*"], lifecycle.keySpan)?.get(
    "runner_removals",
  );
  if (!list) return [];
  const items = r.seq(list.value, "lifecycle.runner_removals", list.keySpan);
  if (!items) return [];
  const out: RunnerRemovalDecl[] = [];
  const seen = new Set<string>();
  items.forEach((item: YNode, i: number) => {
    const where = `lifecycle.runner_removals[${i}]`;
    const at = r.span(item, list.keySpan);
    const m = r.map(item, where, ["model"], at);
    if (!m) return;
    const e = r.required(m, "model", where, at);
    const model = e ? r.string(e, `${where}.model`) : null;
    if (model === null || !e) return;
    if (!isName(model)) {
      r.error(
        "MANIFEST_INVALID_NAME",
        `${where}.model '${model}' must match [a-z][a-z0-9_]* (at most 64 characters)`,
        r.valueSpan(e),
      );
      return;
    }
    if (seen.has(model)) {
      r.error(
        "MANIFEST_DUPLICATE_NAME",
        `model '${model}' is declared removed twice in lifecycle.runner_removals`,
        r.valueSpan(e),
      );
      return;
    }
    seen.add(model);
    if (declaredModels.has(model)) {
      r.error(
        "MANIFEST_REMOVAL_COLLISION",
        `${where} removes model '${model}', which 'models:' still declares: remove the model or the removal`,
        r.valueSpan(e),
        { model },
      );
      return;
    }
    out.push({ model, span: at });
  });
  return out;
}
