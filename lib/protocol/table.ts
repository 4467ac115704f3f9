/**
 * What every journey table shares, written once: how a table declares its fault sites
 * ({@link siteMaker}), how a step finds its row and its site ({@link rowOf}, {@link siteOf}), the
 * sites of a table in order ({@link tableSites}) or of one command of it ({@link commandSites}), and the operation ID a plan derives for a
 * journey that a plan starts at most once ({@link derivedOperationId}). The tables themselves
 * (`create.ts`, `removal.ts`, `connector.ts`, `replacement.ts`, `day_two.ts`, `operator.ts`) hold
 * only their rows.
 *
 * @example
 * ```ts
 * import { rowOf, siteMaker } from "./table.ts";
 * const site = siteMaker(import.meta.url);
 * const TABLE = [{ step: "write", site: site("state.write", "state", "write it") }] as const;
 * console.log(rowOf("toy", TABLE, "write").site?.name); // state.write
 * ```
 * @module
 */
import { type FaultSite, faultSite } from "../fault/site.ts";
import { sha256Hex } from "../artifact/canonical.ts";

/**
 * The site declarer of one table module: `where` is the module's `import.meta.url`, which the
 * inventory prints as the site's location.
 *
 * @example
 * ```ts
 * import { siteMaker } from "./table.ts";
 * const site = siteMaker(import.meta.url);
 * console.log(site("docker.start_runner", "provider", "start it").name); // docker.start_runner
 * ```
 */
export function siteMaker(
  where: string,
): (name: string, kind: FaultSite["kind"], description: string) => FaultSite {
  return (name, kind, description) => faultSite({ name, kind, description, where });
}

/** The part of a row every journey table has: its step and the site it crosses (null: none). */
export interface StepRow<Step extends string> {
  readonly step: Step;
  readonly site: FaultSite | null;
}

/**
 * The row of `step` in the table named `table` (a step without a row is a programming error).
 *
 * @example
 * ```ts
 * import { rowOf } from "./table.ts";
 * rowOf("toy", [{ step: "a", site: null }], "a"); // { step: "a", site: null }
 * ```
 */
export function rowOf<Row extends StepRow<string>>(
  table: string,
  rows: readonly Row[],
  step: Row["step"],
): Row {
  const row = rows.find((r) => r.step === step);
  if (!row) throw new Error(`the ${table} table has no ${step} row`);
  return row;
}

/**
 * The site the row of `step` crosses (a step without one is a programming error).
 *
 * @example
 * ```ts
 * import { siteMaker, siteOf } from "./table.ts";
 * const s = siteMaker(import.meta.url)("state.write", "state", "write it");
 * console.log(siteOf("toy", [{ step: "a", site: s }], "a") === s); // true
 * ```
 */
export function siteOf<Row extends StepRow<string>>(
  table: string,
  rows: readonly Row[],
  step: Row["step"],
): FaultSite {
  const s = rowOf(table, rows, step).site;
  if (!s) throw new Error(`the ${table} table's ${step} row crosses no site`);
  return s;
}

/**
 * The sites of a table's rows, in table order.
 *
 * @example
 * ```ts
 * import { tableSites } from "./table.ts";
 * console.log(tableSites([{ site: null }]).length); // 0
 * ```
 */
export function tableSites(rows: readonly { readonly site: FaultSite | null }[]): FaultSite[] {
  return rows.flatMap((r) => (r.site ? [r.site] : []));
}

/**
 * The sites one command crosses, in table order: the rows whose `by` names it (a table of
 * several commands, each crossing some of its rows).
 *
 * @example
 * ```ts
 * import { commandSites } from "./table.ts";
 * console.log(commandSites([{ by: ["restart"], site: null }], "restart").length); // 0
 * ```
 */
export function commandSites<Command extends string>(
  rows: readonly { readonly by: readonly Command[]; readonly site: FaultSite | null }[],
  command: Command,
): FaultSite[] {
  return tableSites(rows.filter((r) => r.by.includes(command)));
}

/**
 * The operation ID of a journey a plan starts at most once, derived from the plan file's sha256
 * under the journey's own namespace: a UUID of version 8 (derived, not random), so the audit's
 * `ownership_committed` event of that ID proves, after a lost acknowledgement, that this plan's
 * operation was committed.
 *
 * @example
 * ```ts
 * import { derivedOperationId } from "./table.ts";
 * derivedOperationId("sluice.runner-removal", "ab".repeat(32)); // "xxxxxxxx-xxxx-8xxx-…"
 * ```
 */
export function derivedOperationId(namespace: string, planSha256: string): string {
  const h = sha256Hex(`${namespace}\0${planSha256}`);
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${
    h.slice(20, 32)
  }`;
}
