/**
 * Independent reads for the sweep's invariants: the fake world's document and the state
 * store's files or rows, parsed directly — never through the sluice code under test (no
 * `StateStore`, no observer, no port). A sealed entry (`{bytes, sha256}`) is opened by parsing
 * its bytes; nothing is verified here that the invariants do not check themselves.
 *
 * @example
 * ```ts
 * import { readWorldFile } from "./reads.ts";
 * // const w = readWorldFile(`${dir}/world.json`);
 * // Object.values(w.docker.containers).length
 * ```
 * @module
 */
import pg from "pg";
import type { FakeContainer, World } from "../fakes/world.ts";

/**
 * The world document as it is on disk.
 *
 * @example
 * ```ts
 * import { readWorldFile } from "./reads.ts";
 * // console.log(readWorldFile(path).log.length);
 * ```
 */
export function readWorldFile(path: string): World {
  return JSON.parse(Deno.readTextFileSync(path)) as World;
}

/** The containers carrying an application ID label. */
export function containersOf(w: World, applicationId: string): FakeContainer[] {
  return Object.values(w.docker.containers).filter((c) =>
    c.labels["sluice.application-id"] === applicationId
  );
}

/** A group's committed offsets on a topic (partition → offset). */
export function committedOf(w: World, group: string, topic: string): Record<string, bigint> {
  const offs = w.kafka.groups[group]?.offsets[topic] ?? {};
  return Object.fromEntries(Object.entries(offs).map(([p, o]) => [p, BigInt(o)]));
}

/** A volume's instance label and instance file, or null when the volume is absent. */
export function volumeOf(
  w: World,
  name: string,
): { label: string | null; file: string | null } | null {
  const v = w.docker.volumes[name];
  if (!v) return null;
  const b64 = v.files["instance-id"];
  const file = b64 === undefined
    ? null
    : new TextDecoder().decode(Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0))).trim();
  return { label: v.labels["sluice.volume-instance"] ?? null, file };
}

/** A sealed entry of a control or history document. */
interface Sealed {
  bytes: string;
  sha256: string;
}

/** Open a sealed entry (or return a plain object as it is). */
export function unseal<T>(e: unknown): T {
  const s = e as Partial<Sealed>;
  return (typeof s?.bytes === "string" ? JSON.parse(s.bytes) : e) as T;
}

/** The documents of one scope, as stored. */
export interface StoredState {
  ownership: Record<string, unknown> | null;
  control: Record<string, unknown> | null;
  history: Record<string, unknown> | null;
  /** Local: lock.json is present. PostgreSQL: a session holds the scope's advisory lock row. */
  lockFile: boolean;
}

/** Where a case's state lives. */
export type StateLocation =
  | { backend: "local"; dir: string; project: string }
  | { backend: "postgres"; url: string; project: string };

function bodyDocument(text: string): Record<string, unknown> {
  return (JSON.parse(text) as { document: Record<string, unknown> }).document;
}

/**
 * Read the ownership, control and history documents of a single-environment project.
 *
 * @example
 * ```ts
 * import { readState } from "./reads.ts";
 * // const s = await readState({ backend: "local", dir: ".sluice/state", project: "orders" });
 * ```
 */
export async function readState(at: StateLocation): Promise<StoredState> {
  if (at.backend === "local") {
    const dir = `${at.dir}/${at.project}`;
    const doc = (name: string) => {
      try {
        return bodyDocument(Deno.readTextFileSync(`${dir}/${name}.json`));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    };
    let lockFile = true;
    try {
      Deno.statSync(`${dir}/lock.json`);
    } catch {
      lockFile = false;
    }
    return {
      ownership: doc("ownership"),
      control: doc("control"),
      history: doc("history"),
      lockFile,
    };
  }
  const c = new pg.Client({ connectionString: at.url });
  await c.connect();
  try {
    const scope = JSON.stringify([at.project, null]);
    const rows = await c.query(
      "SELECT name, body FROM sluice.sluice_documents WHERE scope = $1",
      [scope],
    );
    const get = (name: string) => {
      const r = rows.rows.find((x) => x.name === name);
      return r ? bodyDocument(r.body as string) : null;
    };
    const locks = await c.query(
      "SELECT count(*)::int AS n FROM sluice.sluice_locks WHERE scope = $1",
      [
        scope,
      ],
    );
    return {
      ownership: get("ownership"),
      control: get("control"),
      history: get("history"),
      lockFile: (locks.rows[0].n as number) > 0,
    };
  } finally {
    await c.end();
  }
}

/** One history event, unsealed. */
export type HistoryEvent = Record<string, unknown> & { kind: string };

/** The history's events, unsealed. */
export function historyEvents(s: StoredState): HistoryEvent[] {
  const events = (s.history?.events ?? []) as unknown[];
  return events.map((e) => unseal<HistoryEvent>(e));
}

/** The checkpoint names of a control document (or of a receipt's terminal control). */
export function checkpointNames(control: Record<string, unknown> | null): string[] {
  const cps = (control?.checkpoints ?? []) as unknown[];
  return cps.map((c) => unseal<{ name: string }>(c).name);
}

/** The old_closed checkpoint's offsets of a control document, partition → offset. */
export function cleanCloseVector(
  control: Record<string, unknown> | null,
): Record<string, bigint> | null {
  const cps = ((control?.checkpoints ?? []) as unknown[]).map((c) =>
    unseal<{ name: string; offsets?: Array<{ partition: number; offset: string }> }>(c)
  );
  const oc = cps.find((c) => c.name === "old_closed");
  if (!oc?.offsets) return null;
  return Object.fromEntries(oc.offsets.map((o) => [String(o.partition), BigInt(o.offset)]));
}
