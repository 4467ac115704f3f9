/**
 * Run `f` with environment variables set (`undefined` unsets one), restoring each afterwards —
 * for the tests of switches read from the environment (the fault switch, its guard).
 *
 * @example
 * ```ts
 * import { withEnv } from "./with_env.ts";
 * withEnv({ SLUICE_FAULT_POINT: undefined }, () => console.log(Deno.env.get("SLUICE_FAULT_POINT")));
 * ```
 * @module
 */

/** Run `f` with `vars` set (or unset), then put every one back as it was. */
export function withEnv(vars: Record<string, string | undefined>, f: () => void): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
  };
  apply(vars);
  try {
    f();
  } finally {
    apply(saved);
  }
}
