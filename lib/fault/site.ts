/**
 * Fault sites: the one mechanism through which every persistence point and every provider
 * mutation passes — each durable write of the local state backend (each file of a multi-file
 * sequence, each rename and directory fsync), each PostgreSQL commit, each lock operation, each
 * Docker, Kafka or Kafka Connect mutation — and so the one place where a test can kill the
 * process at that point.
 *
 * A site is plain data ({@link faultSite}); there is no registry filled by imports. The modules
 * that cross sites declare them next to the code (as rows of their tables), and the inventory
 * is composed from those declarations explicitly.
 *
 * **Test-only interface.** `SLUICE_FAULT_POINT=<site>:<before|after>[@<n>]` arms one site for a
 * whole process: at the n-th crossing (default the first) the process kills itself with
 * SIGKILL — a real process death, not an exception — either before the call (nothing happened)
 * or after it returned (a lost response). A process refuses to arm a fault unless
 * `SLUICE_TEST_ONLY_ALLOW_FAULTS=1` is set as well ({@link armedFault}); entry points call
 * {@link guardFaultSwitch} at start-up so a production process with a stray
 * `SLUICE_FAULT_POINT` stops before doing anything. See docs/fault-injection.md.
 *
 * @example
 * ```ts
 * import { atSite, faultSite } from "./site.ts";
 * const REMOVE = faultSite({
 *   name: "docker.remove_old",
 *   kind: "provider",
 *   description: "remove the exact stopped old container",
 *   where: import.meta.url,
 * });
 * const removed = await atSite(REMOVE, () => Promise.resolve("gone"));
 * console.log(removed);
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";

/** Which side of a site a fault fires on: before the call, or after it returned. */
export type FaultSide = "before" | "after";

/**
 * What a site persists or mutates: a journal checkpoint, another state write (ownership,
 * history, control, receipts), a lock operation, or a provider (Docker, Kafka, Connect).
 */
export type SiteKind = "journal" | "state" | "lock" | "provider";

/** A state backend a site belongs to (a site without backends is crossed on both). */
export type SiteBackend = "local" | "postgres";

/** One fault site: a persistence point or provider mutation, declared as data. */
export interface FaultSite {
  /** Stable dotted name, unique in the inventory, e.g. `state.local.finalize.receipt.rename`. */
  readonly name: string;
  readonly kind: SiteKind;
  /** What crossing it does, in the operator's words. */
  readonly description: string;
  /** The module that crosses it (`import.meta.url` of the declaring module). */
  readonly where: string;
  /** The state backends on which it is crossed; absent means both. */
  readonly backends?: readonly SiteBackend[];
}

const NAME = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/;

/**
 * Declare a site. Pure: validates the name and freezes the value; nothing is registered.
 *
 * @example
 * ```ts
 * import { faultSite } from "./site.ts";
 * const s = faultSite({ name: "lock.acquire", kind: "lock", description: "take the lock",
 *   where: import.meta.url });
 * console.log(s.name);
 * ```
 */
export function faultSite(def: FaultSite): FaultSite {
  if (!NAME.test(def.name)) {
    throw new Error(`fault site name ${JSON.stringify(def.name)} is not <area>.<operation>...`);
  }
  return Object.freeze({ ...def, ...(def.backends ? { backends: [...def.backends] } : {}) });
}

/**
 * Where a site is, relative to the repository root (for `deno task probes --list`).
 *
 * @example
 * ```ts
 * import { faultSite, siteLocation } from "./site.ts";
 * const s = faultSite({ name: "a.b", kind: "state", description: "", where: import.meta.url });
 * console.log(siteLocation(s)); // lib/fault/site.ts
 * ```
 */
export function siteLocation(site: FaultSite): string {
  const root = new URL("../../", import.meta.url).href;
  return site.where.startsWith(root) ? site.where.slice(root.length) : site.where;
}

/** The variables of the test-only fault switch. */
export const FAULT_ENV = {
  /** `<site>:<before|after>[@<n>]`: the site to die at. */
  point: "SLUICE_FAULT_POINT",
  /** Must be `1` for {@link FAULT_ENV.point} to be honoured; otherwise a process refuses to run. */
  allow: "SLUICE_TEST_ONLY_ALLOW_FAULTS",
} as const;

/** The fault armed for this process. */
export interface ArmedFault {
  site: string;
  side: FaultSide;
  /** 1-based crossing count of that site at which to fire. */
  occurrence: number;
}

/**
 * Parse `<site>:<before|after>[@<n>]`.
 *
 * @example
 * ```ts
 * import { parseFaultPoint } from "./site.ts";
 * console.log(parseFaultPoint("docker.remove_old:after@2"));
 * ```
 */
export function parseFaultPoint(raw: string): ArmedFault {
  const m = /^([a-z][a-z0-9_.]*):(before|after)(?:@([1-9][0-9]*))?$/.exec(raw);
  if (!m) {
    throw new SluiceError(
      "USAGE_FAULT_POINT",
      `${FAULT_ENV.point} must be <site>:<before|after>[@<n>], not ${JSON.stringify(raw)}`,
    );
  }
  return { site: m[1], side: m[2] as FaultSide, occurrence: m[3] ? Number(m[3]) : 1 };
}

function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no env permission: no fault can be armed
  }
}

/**
 * The fault armed for this process, or null. Throws `USAGE_FAULT_SWITCH_NOT_ALLOWED` when the
 * switch is set without the test-only permission variable: it is never silently ignored.
 *
 * @example
 * ```ts
 * import { armedFault } from "./site.ts";
 * console.log(armedFault()); // null unless a test armed one
 * ```
 */
export function armedFault(): ArmedFault | null {
  const raw = envGet(FAULT_ENV.point);
  if (raw === undefined || raw === "") return null;
  if (envGet(FAULT_ENV.allow) !== "1") {
    throw new SluiceError(
      "USAGE_FAULT_SWITCH_NOT_ALLOWED",
      `${FAULT_ENV.point} is set (${raw}); it is a test-only switch that kills this process. ` +
        `Unset it, or set ${FAULT_ENV.allow}=1 in a test (docs/fault-injection.md).`,
    );
  }
  return parseFaultPoint(raw);
}

/**
 * Start-up check for every entry point: refuse a fault switch set without the test-only
 * permission, and one naming a site that is not in the inventory.
 *
 * @example
 * ```ts
 * import { guardFaultSwitch } from "./site.ts";
 * guardFaultSwitch(new Set(["docker.remove_old"]));
 * ```
 */
export function guardFaultSwitch(known: ReadonlySet<string>): void {
  const armed = armedFault();
  if (armed && !known.has(armed.site)) {
    throw new SluiceError(
      "USAGE_FAULT_POINT",
      `${FAULT_ENV.point} names unknown site ${armed.site} (deno task probes --list shows them)`,
    );
  }
}

/** A crossing seen by a listener: the site, the side, and the site's crossing count so far. */
export interface Crossing {
  site: FaultSite;
  side: FaultSide;
  occurrence: number;
}

type Listener = (c: Crossing) => void;
const listeners: Listener[] = [];
const counts = new Map<string, number>();

/**
 * Observe crossings (tests record the sites a journey crossed). Returns an unsubscribe function.
 *
 * @example
 * ```ts
 * import { onCrossing } from "./site.ts";
 * const seen: string[] = [];
 * const stop = onCrossing((c) => seen.push(`${c.site.name}:${c.side}`));
 * stop();
 * ```
 */
export function onCrossing(listener: Listener): () => void {
  listeners.push(listener);
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  };
}

function fire(site: FaultSite, side: FaultSide, occurrence: number): void {
  for (const l of [...listeners]) l({ site, side, occurrence });
  const armed = armedFault();
  if (armed && armed.site === site.name && armed.side === side && armed.occurrence === occurrence) {
    // leave a trace for the harness, then die the way a crashed process dies
    console.error(`SLUICE_FAULT_FIRED ${site.name}:${side}@${occurrence}`);
    Deno.kill(Deno.pid, "SIGKILL");
    // SIGKILL cannot arrive late; if we are still here, never continue past the point
    throw new Error(`fault ${site.name}:${side} fired but the process survived`);
  }
}

/**
 * Cross a site: the fault point before, the call, the fault point after (a lost response).
 *
 * @example
 * ```ts
 * import { atSite, faultSite } from "./site.ts";
 * const S = faultSite({ name: "demo.write", kind: "state", description: "", where: import.meta.url });
 * console.log(await atSite(S, () => Promise.resolve(42)));
 * ```
 */
export async function atSite<T>(site: FaultSite, call: () => Promise<T>): Promise<T> {
  const occurrence = (counts.get(site.name) ?? 0) + 1;
  counts.set(site.name, occurrence);
  fire(site, "before", occurrence);
  const result = await call();
  fire(site, "after", occurrence);
  return result;
}
