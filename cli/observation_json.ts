/**
 * The `observe -o json` envelope's data, stable across SDK 0.2.0: the SDK's observation
 * (snake_case) with the camelCase field names the CLI's JSON has always had. The inverse of the
 * SDK's rename (`lib/sdk/observation.ts`): each `snake_case` field name becomes `snakeCase`; the
 * keys of a map whose keys are data are kept as they are (`cli/observation_json_test.ts` checks
 * that a runtime observation renamed by the SDK and back by this is the same value).
 * @module
 */
import type { ProjectObservation } from "../mod.ts";

/** Where a value's keys are data (paths in the SDK's names; `*` is any array element). */
const DATA_KEYS: readonly string[] = [
  "connectors",
  "runners.*.containers.*.networks",
  "runners.*.containers.*.plan.identity",
  "runners.*.containers.*.runner_status",
  "runners.*.volume.labels",
  "runners.*.kafka.committed",
];

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function renamed(value: unknown, path: string): unknown {
  if (DATA_KEYS.includes(path)) return value;
  if (Array.isArray(value)) return value.map((v) => renamed(v, path ? `${path}.*` : "*"));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [camel(k), renamed(v, path ? `${path}.${k}` : k)]),
  );
}

/** The CLI's JSON of an observation (camelCase field names, as before SDK 0.2.0). */
export function observationJson(o: ProjectObservation): unknown {
  return renamed(o, "");
}
