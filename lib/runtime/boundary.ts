/**
 * The boundary helper: the one place through which every journal write and every provider
 * mutation of a replacement passes, and so the one place where fault points fire.
 *
 * Each boundary is declared once with {@link defineBoundary}; the declarations form the
 * inventory ({@link boundaryInventory}) that the fault-injection harness enumerates, so a new
 * boundary is covered by construction rather than by a list someone must keep in sync.
 *
 * A fault point is armed for a whole process by the environment variable
 * `SLUICE_FAULT_POINT=<boundary>:<before|after>`. When the armed boundary is crossed the
 * process kills itself with SIGKILL — a real process death, not an exception — either before
 * the call is made or after it returned (the latter is a lost response).
 *
 * @example
 * ```ts
 * import { crossBoundary, defineBoundary } from "./boundary.ts";
 * const TERM = defineBoundary("docker.signal_term", "provider", "request TERM of the old runner");
 * // await crossBoundary(TERM, () => docker.signalTerm(id));
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";

/** What a boundary writes to. */
export type BoundaryKind = "journal" | "provider";

/** A declared boundary. */
export interface Boundary {
  name: string;
  kind: BoundaryKind;
  description: string;
}

/** Which side of a boundary a fault fires on. */
export type FaultSide = "before" | "after";

const registry = new Map<string, Boundary>();

/** Declare a boundary (once, at module load). */
export function defineBoundary(name: string, kind: BoundaryKind, description: string): Boundary {
  const existing = registry.get(name);
  if (existing) return existing;
  const b = { name, kind, description };
  registry.set(name, b);
  return b;
}

/** Every declared boundary, in declaration order. */
export function boundaryInventory(): Boundary[] {
  return [...registry.values()];
}

/** The fault point armed for this process, if any. */
export function armedFault(): { boundary: string; side: FaultSide } | null {
  const raw = Deno.env.get("SLUICE_FAULT_POINT");
  if (!raw) return null;
  const m = /^(.+):(before|after)$/.exec(raw);
  if (!m) {
    throw new SluiceError(
      "USAGE_FAULT_POINT",
      `SLUICE_FAULT_POINT must be <boundary>:<before|after>, not ${raw}`,
    );
  }
  if (!registry.has(m[1])) {
    throw new SluiceError(
      "USAGE_FAULT_POINT",
      `SLUICE_FAULT_POINT names unknown boundary ${m[1]}; known: ${
        [...registry.keys()].join(", ")
      }`,
    );
  }
  return { boundary: m[1], side: m[2] as FaultSide };
}

/** Observers of crossings (the harness records the boundaries an operation crossed). */
type Listener = (boundary: Boundary, side: FaultSide) => void;
const listeners: Listener[] = [];

/** Subscribe to boundary crossings (returns an unsubscribe function). */
export function onBoundary(listener: Listener): () => void {
  listeners.push(listener);
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  };
}

function fire(b: Boundary, side: FaultSide): void {
  for (const l of listeners) l(b, side);
  const armed = armedFault();
  if (armed && armed.boundary === b.name && armed.side === side) {
    // Leave a trace for the harness, then die the way a crashed worker dies.
    console.error(`SLUICE_FAULT_FIRED ${b.name}:${side}`);
    Deno.kill(Deno.pid, "SIGKILL");
    // SIGKILL is not deliverable late; if we are still here, never continue past the point
    throw new Error(`fault point ${b.name}:${side} fired but the process survived`);
  }
}

/** Cross a boundary: fault point before, the call, fault point after. */
export async function crossBoundary<T>(b: Boundary, call: () => Promise<T>): Promise<T> {
  if (!registry.has(b.name)) throw new Error(`boundary ${b.name} was not declared`);
  fire(b, "before");
  const result = await call();
  fire(b, "after");
  return result;
}
